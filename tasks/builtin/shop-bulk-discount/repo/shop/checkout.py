"""Turn a cart into a receipt, reserving stock."""

from shop.cart import Cart
from shop.inventory import OutOfStock
from shop.models import Receipt
from shop.pricing import order_discount, tax


def checkout(cart: Cart, code: str | None = None) -> Receipt:
    """Reserve every line's stock (all or nothing: on OutOfStock nothing stays reserved), then price."""
    if not cart.lines:
        raise ValueError("the cart is empty")
    order_discount(code, 0)  # reject an invalid code before touching stock
    reserved: list[tuple[str, int]] = []
    try:
        for line in cart.lines:
            cart.inventory.reserve(line.sku, line.quantity)
            reserved.append((line.sku, line.quantity))
    except OutOfStock:
        for sku, quantity in reserved:
            cart.inventory.release(sku, quantity)
        raise
    lines = tuple((line.sku, line.quantity, cart.line_total(line)) for line in cart.lines)
    subtotal = sum(total for _, _, total in lines)
    discount = order_discount(code, subtotal)
    taxed = subtotal - discount
    tax_cents = tax(taxed)
    return Receipt(lines, subtotal, discount, tax_cents, taxed + tax_cents)
