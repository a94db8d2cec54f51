import pytest

from shop.inventory import Inventory
from shop.models import Product


@pytest.fixture
def inventory():
    inv = Inventory()
    inv.add_product(Product("TEA", "Green tea", 450, stock=20))
    inv.add_product(Product("MUG", "Mug", 1200, stock=3))
    inv.add_product(Product("PEN", "Pen", 99, stock=100))
    return inv
