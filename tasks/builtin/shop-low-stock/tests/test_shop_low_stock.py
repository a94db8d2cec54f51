from shop.models import Product


def test_low_stock(inventory):
    inventory.add_product(Product("CUP", "Cup", 300, stock=3))
    assert inventory.low_stock(5) == ["CUP", "MUG"]
    assert inventory.low_stock(3) == []
    assert inventory.low_stock(1000) == ["CUP", "MUG", "TEA", "PEN"]
