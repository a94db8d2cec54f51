"""Discount codes and tax."""

from shop.money import percent_of

TAX_PERCENT = 8.25


class InvalidCode(ValueError):
    pass


def order_discount(code: str | None, subtotal: int) -> int:
    """The discount on the whole order: 'SAVE10' is 10 % off, 'FIVEOFF' is $5 off orders of at
    least $20; None gives nothing; any other code is invalid."""
    if code is None:
        return 0
    if code == "SAVE10":
        return percent_of(subtotal, 10)
    if code == "FIVEOFF":
        return 500 if subtotal >= 2000 else 0
    raise InvalidCode(code)


def tax(amount: int) -> int:
    """Sales tax on `amount` cents, rounded half up to a cent."""
    return percent_of(amount, TAX_PERCENT)
