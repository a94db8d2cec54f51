"""A shopping cart: quantities per SKU, priced from the inventory."""

from shop.inventory import Inventory
from shop.models import Line


class Cart:
    def __init__(self, inventory: Inventory) -> None:
        self.inventory = inventory
        self.lines: list[Line] = []

    def add(self, sku: str, quantity: int = 1) -> None:
        """Add units of a product; adding a SKU already in the cart raises its quantity."""
        if quantity < 1:
            raise ValueError("quantity must be at least 1")
        self.inventory.product(sku)  # unknown SKUs fail here
        self.lines.append(Line(sku, quantity))

    def remove(self, sku: str) -> None:
        self.lines = [line for line in self.lines if line.sku != sku]

    def line_total(self, line: Line) -> int:
        return self.inventory.product(line.sku).price_cents * line.quantity

    def subtotal(self) -> int:
        return sum(self.line_total(line) for line in self.lines)
