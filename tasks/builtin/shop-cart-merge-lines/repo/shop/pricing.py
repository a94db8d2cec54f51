"""Discount codes and tax."""

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
