from shop.cart import Cart


def test_merge(inventory):
    cart = Cart(inventory)
    cart.add("TEA", 2)
    cart.add("PEN")
    cart.add("TEA", 3)
    assert [(line.sku, line.quantity) for line in cart.lines] == [("TEA", 5), ("PEN", 1)]
    assert cart.subtotal() == 5 * 450 + 99
