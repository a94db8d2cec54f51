"""Products and their stock."""

from shop.models import Product


class OutOfStock(Exception):
    def __init__(self, sku: str, wanted: int, available: int) -> None:
        super().__init__(f"{sku}: wanted {wanted}, only {available} left")
        self.sku, self.wanted, self.available = sku, wanted, available


class UnknownProduct(KeyError):
    pass


class Inventory:
    def __init__(self) -> None:
        self._products: dict[str, Product] = {}

    def add_product(self, product: Product) -> None:
        self._products[product.sku] = product

    def product(self, sku: str) -> Product:
        try:
            return self._products[sku]
        except KeyError:
            raise UnknownProduct(sku) from None

    def reserve(self, sku: str, quantity: int) -> None:
        """Take `quantity` out of stock; OutOfStock (and no change) if there is not enough."""
        product = self.product(sku)
        if quantity > product.stock:
            raise OutOfStock(sku, quantity, product.stock)
        product.stock -= quantity

    def release(self, sku: str, quantity: int) -> None:
        """Put reserved stock back."""
        self.product(sku).stock += quantity

    def restock(self, sku: str, quantity: int) -> None:
        if quantity <= 0:
            raise ValueError("restock quantity must be positive")
        self.product(sku).stock += quantity

    def low_stock(self, threshold: int) -> list[str]:
        """SKUs with stock below `threshold`, lowest stock first, ties by SKU."""
        raise NotImplementedError
