import pytest

from shop.cart import Cart
from shop.checkout import checkout
from shop.pricing import InvalidCode


def test_bulk(inventory):
    cart = Cart(inventory)
    cart.add("PEN", 15)
    cart.add("TEA", 2)
    receipt = checkout(cart, "BULK")
    assert receipt.subtotal_cents == 15 * 99 + 900
    assert receipt.discount_cents == 149
    taxed = receipt.subtotal_cents - 149
    assert receipt.total_cents == taxed + receipt.tax_cents


def test_other_codes(inventory):
    cart = Cart(inventory)
    cart.add("TEA", 10)
    assert checkout(cart, "SAVE10").discount_cents == 450
    with pytest.raises(InvalidCode):
        checkout(cart, "FREE")
