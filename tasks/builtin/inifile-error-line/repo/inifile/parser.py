"""Parse INI text into {section: {key: value}}."""

import re

SECTION = re.compile(r"^\[([^\]]+)\]$")
COMMENT_PREFIXES = ("#", ";")


class ParseError(ValueError):
    def __init__(self, message: str, line: int) -> None:
        super().__init__(f"line {line}: {message}")
        self.line = line


def strip_inline_comment(value: str) -> str:
    """Drop a ` #` or ` ;` comment (preceded by whitespace) from the end of a value."""
    match = re.search(r"\s[#;]", value)
    return value[: match.start()].rstrip() if match else value


def parse(text: str) -> dict[str, dict[str, str]]:
    """Sections hold `key = value` (or `key: value`) pairs; keys are lower-cased, values stripped.

    Lines starting with # or ; are comments. An indented line continues the previous value
    (joined with a newline). Keys before any section go to the section "DEFAULT".
    """
    data: dict[str, dict[str, str]] = {}
    section = "DEFAULT"
    last_key: str | None = None
    for number, raw in enumerate(text.splitlines()):
        line = raw.strip()
        if not line or line.startswith(COMMENT_PREFIXES):
            continue
        if raw[:1] in (" ", "\t") and last_key is not None:
            data[section][last_key] += "\n" + strip_inline_comment(line)
            continue
        match = SECTION.match(line)
        if match:
            section = match.group(1).strip()
            data.setdefault(section, {})
            last_key = None
            continue
        key, sep, value = _split(line)
        if not sep or not key:
            raise ParseError(f"expected 'key = value', got {line!r}", number)
        data.setdefault(section, {})[key.lower()] = strip_inline_comment(value)
        last_key = key.lower()
    return data


def _split(line: str) -> tuple[str, str, str]:
    positions = [p for p in (line.find("="), line.find(":")) if p >= 0]
    if not positions:
        return line, "", ""
    at = min(positions)
    return line[:at].strip(), line[at], line[at + 1:].strip()
