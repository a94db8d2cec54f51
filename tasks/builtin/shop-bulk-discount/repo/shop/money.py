"""Money helpers (integer cents)."""


def format_cents(cents: int) -> str:
    """'$1,234.05' for 123405; negative amounts as '-$0.50'."""
    sign = "-" if cents < 0 else ""
    dollars, rest = divmod(abs(cents), 100)
    return f"{sign}${dollars:,}.{rest:02d}"


def percent_of(cents: int, percent: float) -> int:
    """`percent` % of `cents`, rounded half up to a whole cent (2.5 -> 3, 2.4 -> 2)."""
    exact = cents * percent / 100
    return int(exact + 0.5) if exact >= 0 else -int(-exact + 0.5)
