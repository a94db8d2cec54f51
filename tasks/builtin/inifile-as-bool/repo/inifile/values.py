"""Convert configuration strings to Python values."""

TRUE = {"1", "yes", "true", "on"}
FALSE = {"0", "no", "false", "off"}


def as_bool(value: str) -> bool:
    """'yes'/'true'/'on'/'1' -> True and 'no'/'false'/'off'/'0' -> False, any case and surrounding
    whitespace; anything else raises ValueError."""
    raise NotImplementedError


def as_list(value: str, sep: str = ",") -> list[str]:
    """Split on `sep` and on newlines, strip each item, drop empty items: 'a, b,,c' -> ['a', 'b', 'c']."""
    items = []
    for line in value.splitlines():
        items.extend(part.strip() for part in line.split(sep))
    return [item for item in items if item]


def as_int(value: str) -> int:
    """An integer, allowing underscores and a 0x prefix: '1_000' -> 1000, '0x1F' -> 31."""
    text = value.strip().replace("_", "")
    return int(text, 16) if text.lower().startswith("0x") else int(text)
