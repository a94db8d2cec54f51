"""Identifier case conversion."""

import re


def snake_to_camel(name: str, upper_first: bool = False) -> str:
    """'parse_http_header' -> 'parseHttpHeader' (or 'ParseHttpHeader' with upper_first)."""
    parts = [p for p in name.split("_") if p]
    if not parts:
        return ""
    head = parts[0].capitalize() if upper_first else parts[0].lower()
    return head + "".join(p.capitalize() for p in parts[1:])


def camel_to_snake(name: str) -> str:
    """'parseHTTPHeader' -> 'parse_http_header'; 'HTMLParser' -> 'html_parser'; 'version2Id' -> 'version2_id'.

    An upper-case letter starts a new word when it follows a lower-case letter or digit, or when it
    is followed by a lower-case letter and preceded by another upper-case letter.
    """
    step = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", name)
    step = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", step)
    return step.lower()
