"""Plain records."""

from dataclasses import dataclass


@dataclass
class Product:
    sku: str
    name: str
    price_cents: int
    stock: int = 0


@dataclass
class Line:
    sku: str
    quantity: int


@dataclass(frozen=True)
class Receipt:
    lines: tuple[tuple[str, int, int], ...]
    """(sku, quantity, line total in cents) per line."""
    subtotal_cents: int
    discount_cents: int
    tax_cents: int
    total_cents: int
