import pytest

from shop.cart import Cart
from shop.checkout import checkout
from shop.inventory import OutOfStock


def test_all_or_nothing(inventory):
    cart = Cart(inventory)
    cart.add("TEA", 5)
    cart.add("PEN", 10)
    cart.add("MUG", 4)
    with pytest.raises(OutOfStock):
        checkout(cart)
    assert [inventory.product(s).stock for s in ("TEA", "PEN", "MUG")] == [20, 100, 3]
    cart.remove("MUG")
    checkout(cart)
    assert [inventory.product(s).stock for s in ("TEA", "PEN", "MUG")] == [15, 90, 3]
