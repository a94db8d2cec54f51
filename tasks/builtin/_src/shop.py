PROJECT = "shop"

BASE = {
    "README.md": """# shop

The service layer of a small web shop (no HTTP here): products and stock, carts, prices with
discount codes and tax, and checkout. Money is kept in integer cents. Run the tests with
`python3 -m pytest -q`.
""",
    "shop/__init__.py": '''"""shop: inventory, carts, pricing and checkout in integer cents."""
''',
    "shop/models.py": '''"""Plain records."""

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
''',
    "shop/money.py": '''"""Money helpers (integer cents)."""


def format_cents(cents: int) -> str:
    """'$1,234.05' for 123405; negative amounts as '-$0.50'."""
    sign = "-" if cents < 0 else ""
    dollars, rest = divmod(abs(cents), 100)
    return f"{sign}${dollars:,}.{rest:02d}"


def percent_of(cents: int, percent: float) -> int:
    """`percent` % of `cents`, rounded half up to a whole cent (2.5 -> 3, 2.4 -> 2)."""
    exact = cents * percent / 100
    return int(exact + 0.5) if exact >= 0 else -int(-exact + 0.5)
''',
    "shop/inventory.py": '''"""Products and their stock."""

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
        low = [p for p in self._products.values() if p.stock < threshold]
        return [p.sku for p in sorted(low, key=lambda p: (p.stock, p.sku))]
''',
    "shop/cart.py": '''"""A shopping cart: quantities per SKU, priced from the inventory."""

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
        for line in self.lines:
            if line.sku == sku:
                line.quantity += quantity
                return
        self.lines.append(Line(sku, quantity))

    def remove(self, sku: str) -> None:
        self.lines = [line for line in self.lines if line.sku != sku]

    def line_total(self, line: Line) -> int:
        return self.inventory.product(line.sku).price_cents * line.quantity

    def subtotal(self) -> int:
        return sum(self.line_total(line) for line in self.lines)
''',
    "shop/pricing.py": '''"""Discount codes and tax."""

from shop.money import percent_of

TAX_PERCENT = 8.25


class InvalidCode(ValueError):
    pass


def line_discount(code: str | None, quantity: int, line_total: int) -> int:
    """The discount on one cart line: code 'BULK' takes 10 % off lines of 10 or more units."""
    if code == "BULK" and quantity >= 10:
        return percent_of(line_total, 10)
    return 0


def order_discount(code: str | None, subtotal: int) -> int:
    """The discount on the whole order: 'SAVE10' is 10 % off, 'FIVEOFF' is $5 off orders of at
    least $20; 'BULK' (handled per line) and None give nothing here; any other code is invalid."""
    if code is None or code == "BULK":
        return 0
    if code == "SAVE10":
        return percent_of(subtotal, 10)
    if code == "FIVEOFF":
        return 500 if subtotal >= 2000 else 0
    raise InvalidCode(code)


def tax(amount: int) -> int:
    """Sales tax on `amount` cents, rounded half up to a cent."""
    return percent_of(amount, TAX_PERCENT)
''',
    "shop/checkout.py": '''"""Turn a cart into a receipt, reserving stock."""

from shop.cart import Cart
from shop.inventory import OutOfStock
from shop.models import Receipt
from shop.pricing import line_discount, order_discount, tax


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
    discount = sum(line_discount(code, quantity, total) for _, quantity, total in lines)
    discount += order_discount(code, subtotal - discount)
    taxed = subtotal - discount
    tax_cents = tax(taxed)
    return Receipt(lines, subtotal, discount, tax_cents, taxed + tax_cents)
''',
    "tests/conftest.py": """import pytest

from shop.inventory import Inventory
from shop.models import Product


@pytest.fixture
def inventory():
    inv = Inventory()
    inv.add_product(Product("TEA", "Green tea", 450, stock=20))
    inv.add_product(Product("MUG", "Mug", 1200, stock=3))
    inv.add_product(Product("PEN", "Pen", 99, stock=100))
    return inv
""",
    "tests/test_basics.py": """from shop.cart import Cart
from shop.checkout import checkout


def test_simple_checkout(inventory):
    cart = Cart(inventory)
    cart.add("MUG")
    receipt = checkout(cart)
    assert receipt.subtotal_cents == 1200 and receipt.discount_cents == 0
    assert inventory.product("MUG").stock == 2
""",
}

TASKS = [
    {
        "id": "shop-format-cents",
        "difficulty": "easy",
        "split": "dev",
        "stubs": [("shop/money.py", "format_cents")],
        "statement": "Implement `format_cents(cents)` in `shop/money.py`: an amount in integer cents as "
        "dollars with a thousands separator and two decimals: 123405 -> '$1,234.05', "
        "7 -> '$0.07', -50 -> '-$0.50'.",
        "test": """from shop.money import format_cents


def test_format():
    assert format_cents(123405) == "$1,234.05"
    assert format_cents(7) == "$0.07"
    assert format_cents(0) == "$0.00"
    assert format_cents(-50) == "-$0.50"
    assert format_cents(100000000) == "$1,000,000.00"
""",
    },
    {
        "id": "shop-round-half-up",
        "difficulty": "medium",
        "split": "dev",
        "edits": [
            (
                "shop/money.py",
                """    exact = cents * percent / 100
    return int(exact + 0.5) if exact >= 0 else -int(-exact + 0.5)""",
                """    return round(cents * percent / 100)""",
            )
        ],
        "statement": "Tax and percentage discounts are sometimes one cent too low: 10 % of 25 cents gives "
        "2 cents instead of 3 (and 10 % of 45 gives 4, not 5). `percent_of` in "
        "`shop/money.py` must round half up, as its docstring says.",
        "test": """from shop.money import percent_of
from shop.pricing import tax


def test_half_up():
    assert percent_of(25, 10) == 3
    assert percent_of(45, 10) == 5
    assert percent_of(24, 10) == 2
    assert percent_of(1000, 8.25) == 83
    assert tax(200) == 17
""",
    },
    {
        "id": "shop-cart-merge-lines",
        "difficulty": "medium",
        "split": "heldout",
        "edits": [
            (
                "shop/cart.py",
                """        for line in self.lines:
            if line.sku == sku:
                line.quantity += quantity
                return
""",
                "",
            )
        ],
        "statement": "Adding the same product to a cart twice creates two lines for it. "
        "`Cart.add` (shop/cart.py) must raise the quantity of the existing line instead.",
        "test": """from shop.cart import Cart


def test_merge(inventory):
    cart = Cart(inventory)
    cart.add("TEA", 2)
    cart.add("PEN")
    cart.add("TEA", 3)
    assert [(line.sku, line.quantity) for line in cart.lines] == [("TEA", 5), ("PEN", 1)]
    assert cart.subtotal() == 5 * 450 + 99
""",
    },
    {
        "id": "shop-low-stock",
        "difficulty": "easy",
        "split": "dev",
        "edits": [
            (
                "shop/inventory.py",
                '''    def low_stock(self, threshold: int) -> list[str]:
        """SKUs with stock below `threshold`, lowest stock first, ties by SKU."""
        low = [p for p in self._products.values() if p.stock < threshold]
        return [p.sku for p in sorted(low, key=lambda p: (p.stock, p.sku))]''',
                '''    def low_stock(self, threshold: int) -> list[str]:
        """SKUs with stock below `threshold`, lowest stock first, ties by SKU."""
        raise NotImplementedError''',
            )
        ],
        "statement": "Implement `Inventory.low_stock(threshold)` in `shop/inventory.py`: the SKUs of "
        "products whose stock is below `threshold`, lowest stock first, ties ordered by SKU.",
        "test": """from shop.models import Product


def test_low_stock(inventory):
    inventory.add_product(Product("CUP", "Cup", 300, stock=3))
    assert inventory.low_stock(5) == ["CUP", "MUG"]
    assert inventory.low_stock(3) == []
    assert inventory.low_stock(1000) == ["CUP", "MUG", "TEA", "PEN"]
""",
    },
    {
        "id": "shop-atomic-checkout",
        "difficulty": "hard",
        "split": "dev",
        "edits": [
            (
                "shop/checkout.py",
                """    reserved: list[tuple[str, int]] = []
    try:
        for line in cart.lines:
            cart.inventory.reserve(line.sku, line.quantity)
            reserved.append((line.sku, line.quantity))
    except OutOfStock:
        for sku, quantity in reserved:
            cart.inventory.release(sku, quantity)
        raise
""",
                """    for line in cart.lines:
        cart.inventory.reserve(line.sku, line.quantity)
""",
            ),
            ("shop/checkout.py", "from shop.inventory import OutOfStock\n", ""),
        ],
        "statement": "Bug: when checkout fails because one product is out of stock, the stock of the "
        "lines before it stays reserved, so it is lost. `checkout` must be all or nothing: "
        "when it raises OutOfStock, every product's stock is as it was before.",
        "test": """import pytest

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
""",
    },
    {
        "id": "shop-bulk-discount",
        "difficulty": "hard",
        "split": "heldout",
        "edits": [
            (
                "shop/pricing.py",
                '''def line_discount(code: str | None, quantity: int, line_total: int) -> int:
    """The discount on one cart line: code 'BULK' takes 10 % off lines of 10 or more units."""
    if code == "BULK" and quantity >= 10:
        return percent_of(line_total, 10)
    return 0


''',
                "",
            ),
            (
                "shop/pricing.py",
                '''    least $20; 'BULK' (handled per line) and None give nothing here; any other code is invalid."""
    if code is None or code == "BULK":''',
                '''    least $20; None gives nothing; any other code is invalid."""
    if code is None:''',
            ),
            (
                "shop/checkout.py",
                """    discount = sum(line_discount(code, quantity, total) for _, quantity, total in lines)
    discount += order_discount(code, subtotal - discount)""",
                """    discount = order_discount(code, subtotal)""",
            ),
            (
                "shop/checkout.py",
                "from shop.pricing import line_discount, order_discount, tax",
                "from shop.pricing import order_discount, tax",
            ),
        ],
        "statement": "Add the discount code 'BULK': at checkout it takes 10 % (rounded half up to a cent) "
        "off every cart line of 10 or more units; lines with fewer units get nothing. The "
        "receipt's `discount_cents` is the sum of the line discounts, tax is computed on "
        "the discounted amount as for other codes. Other codes keep working; unknown codes "
        "still raise InvalidCode.",
        "test": """import pytest

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
""",
    },
]
