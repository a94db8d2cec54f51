"""Roman numerals (1..3999)."""

NUMERALS = [
    (1000, "M"), (900, "CM"), (500, "D"), (400, "CD"), (100, "C"), (90, "XC"),
    (50, "L"), (40, "XL"), (10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I"),
]
VALUES = {"I": 1, "V": 5, "X": 10, "L": 50, "C": 100, "D": 500, "M": 1000}


def to_roman(number: int) -> str:
    """The roman numeral for `number` (1..3999), e.g. 1994 -> 'MCMXCIV'; ValueError outside the range."""
    raise NotImplementedError


def from_roman(text: str) -> int:
    """The value of a roman numeral; ValueError unless `text` is the canonical numeral of that value."""
    text = text.strip().upper()
    if not text or any(ch not in VALUES for ch in text):
        raise ValueError(f"not a roman numeral: {text!r}")
    total = 0
    for i, ch in enumerate(text):
        value = VALUES[ch]
        if i + 1 < len(text) and VALUES[text[i + 1]] > value:
            total -= value
        else:
            total += value
    if not 1 <= total <= 3999 or to_roman(total) != text:
        raise ValueError(f"not a canonical roman numeral: {text!r}")
    return total
