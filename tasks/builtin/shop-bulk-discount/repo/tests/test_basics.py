from shop.cart import Cart
from shop.checkout import checkout


def test_simple_checkout(inventory):
    cart = Cart(inventory)
    cart.add("MUG")
    receipt = checkout(cart)
    assert receipt.subtotal_cents == 1200 and receipt.discount_cents == 0
    assert inventory.product("MUG").stock == 2
