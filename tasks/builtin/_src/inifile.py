PROJECT = "inifile"

BASE = {
    "README.md": """# inifile

A small INI configuration reader and writer: sections, `key = value` pairs, comments, typed
getters and `${section:key}` references. Run the tests with `python3 -m pytest -q`.
""",
    "inifile/__init__.py": '''"""inifile: read and write INI configuration."""

from inifile.config import Config, InterpolationError
from inifile.parser import ParseError, parse
from inifile.writer import dumps

__all__ = ["Config", "InterpolationError", "ParseError", "parse", "dumps"]
''',
    "inifile/parser.py": '''"""Parse INI text into {section: {key: value}}."""

import re

SECTION = re.compile(r"^\\[([^\\]]+)\\]$")
COMMENT_PREFIXES = ("#", ";")


class ParseError(ValueError):
    def __init__(self, message: str, line: int) -> None:
        super().__init__(f"line {line}: {message}")
        self.line = line


def strip_inline_comment(value: str) -> str:
    """Drop a ` #` or ` ;` comment (preceded by whitespace) from the end of a value."""
    match = re.search(r"\\s[#;]", value)
    return value[: match.start()].rstrip() if match else value


def parse(text: str) -> dict[str, dict[str, str]]:
    """Sections hold `key = value` (or `key: value`) pairs; keys are lower-cased, values stripped.

    Lines starting with # or ; are comments. An indented line continues the previous value
    (joined with a newline). Keys before any section go to the section "DEFAULT".
    """
    data: dict[str, dict[str, str]] = {}
    section = "DEFAULT"
    last_key: str | None = None
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith(COMMENT_PREFIXES):
            continue
        if raw[:1] in (" ", "\\t") and last_key is not None:
            data[section][last_key] += "\\n" + strip_inline_comment(line)
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
''',
    "inifile/writer.py": '''"""Write {section: {key: value}} as INI text."""


def dumps(data: dict[str, dict[str, str]]) -> str:
    """INI text that `parse` reads back to the same data; DEFAULT comes first when present."""
    names = sorted(data, key=lambda name: (name != "DEFAULT", list(data).index(name)))
    chunks = []
    for name in names:
        lines = [f"[{name}]"]
        for key, value in data[name].items():
            first, *rest = str(value).split("\\n")
            lines.append(f"{key} = {first}")
            lines.extend(f"    {line}" for line in rest)
        chunks.append("\\n".join(lines))
    return "\\n\\n".join(chunks) + "\\n"
''',
    "inifile/values.py": '''"""Convert configuration strings to Python values."""

TRUE = {"1", "yes", "true", "on"}
FALSE = {"0", "no", "false", "off"}


def as_bool(value: str) -> bool:
    """'yes'/'true'/'on'/'1' -> True and 'no'/'false'/'off'/'0' -> False, any case and surrounding
    whitespace; anything else raises ValueError."""
    text = value.strip().lower()
    if text in TRUE:
        return True
    if text in FALSE:
        return False
    raise ValueError(f"not a boolean: {value!r}")


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
''',
    "inifile/config.py": '''"""Typed access to parsed configuration, with ${section:key} references."""

import re

from inifile.parser import parse
from inifile.values import as_bool, as_int, as_list

REFERENCE = re.compile(r"\\$\\{(?:([^:}]+):)?([^}]+)\\}")


class InterpolationError(ValueError):
    """A ${...} reference names a missing key or refers back to itself."""


class Config:
    def __init__(self, data: dict[str, dict[str, str]]) -> None:
        self.data = data

    @classmethod
    def from_text(cls, text: str) -> "Config":
        return cls(parse(text))

    def raw(self, section: str, key: str) -> str | None:
        """The value as written, looked up in `section` then in DEFAULT."""
        for name in (section, "DEFAULT"):
            value = self.data.get(name, {}).get(key.lower())
            if value is not None:
                return value
        return None

    def get(self, section: str, key: str, default: str | None = None) -> str | None:
        """The value with ${key} (same section) and ${section:key} references replaced."""
        value = self.raw(section, key)
        if value is None:
            return default
        return self._expand(section, value, [(section, key.lower())])

    def _expand(self, section: str, value: str, seen: list[tuple[str, str]]) -> str:
        def replace(match: re.Match) -> str:
            ref_section = match.group(1) or section
            ref_key = match.group(2).lower()
            if (ref_section, ref_key) in seen:
                raise InterpolationError(f"circular reference to {ref_section}:{ref_key}")
            raw = self.raw(ref_section, ref_key)
            if raw is None:
                raise InterpolationError(f"no key {ref_key!r} in section {ref_section!r}")
            return self._expand(ref_section, raw, seen + [(ref_section, ref_key)])

        return REFERENCE.sub(replace, value)

    def getint(self, section: str, key: str, default: int | None = None) -> int | None:
        value = self.get(section, key)
        return default if value is None else as_int(value)

    def getbool(self, section: str, key: str, default: bool | None = None) -> bool | None:
        value = self.get(section, key)
        return default if value is None else as_bool(value)

    def getlist(self, section: str, key: str) -> list[str]:
        value = self.get(section, key)
        return [] if value is None else as_list(value)
''',
    "tests/test_basics.py": """from inifile import Config, parse


def test_parse_sections():
    assert parse("[a]\\nx = 1\\n# note\\n[b]\\ny: two\\n") == {"a": {"x": "1"}, "b": {"y": "two"}}


def test_config_int():
    assert Config.from_text("[s]\\nn = 1_000\\n").getint("s", "n") == 1000
""",
}

TASKS = [
    {
        "id": "inifile-as-bool",
        "difficulty": "easy",
        "split": "dev",
        "stubs": [("inifile/values.py", "as_bool")],
        "statement": "Implement `as_bool(value)` in `inifile/values.py` as its docstring says: "
        "'yes', 'true', 'on', '1' mean True; 'no', 'false', 'off', '0' mean False (any "
        "letter case, surrounding whitespace ignored); any other text raises ValueError.",
        "test": """import pytest

from inifile.values import as_bool


@pytest.mark.parametrize("text", ["yes", "TRUE", " on ", "1", "True"])
def test_true(text):
    assert as_bool(text) is True


@pytest.mark.parametrize("text", ["no", "False", "OFF", "0 "])
def test_false(text):
    assert as_bool(text) is False


@pytest.mark.parametrize("text", ["", "maybe", "2", "y"])
def test_invalid(text):
    with pytest.raises(ValueError):
        as_bool(text)
""",
    },
    {
        "id": "inifile-as-list",
        "difficulty": "easy",
        "split": "heldout",
        "stubs": [("inifile/values.py", "as_list")],
        "statement": "Implement `as_list(value, sep=',')` in `inifile/values.py`: split the text on `sep` "
        "and on newlines, strip every item and drop empty items, e.g. 'a, b,,c' -> "
        "['a', 'b', 'c'] and 'x\\ny, z' -> ['x', 'y', 'z'].",
        "test": """from inifile.values import as_list


def test_split():
    assert as_list("a, b,,c") == ["a", "b", "c"]
    assert as_list("x\\ny, z") == ["x", "y", "z"]
    assert as_list("") == []
    assert as_list("p;q ; r", sep=";") == ["p", "q", "r"]
""",
    },
    {
        "id": "inifile-inline-comments",
        "difficulty": "medium",
        "split": "dev",
        "edits": [
            (
                "inifile/parser.py",
                """        data.setdefault(section, {})[key.lower()] = strip_inline_comment(value)""",
                """        data.setdefault(section, {})[key.lower()] = value""",
            )
        ],
        "statement": "`parse` does not remove inline comments from values: parsing `port = 8080 ; default port` "
        "gives the value '8080 ; default port' instead of '8080'. A `#` or `;` preceded by "
        "whitespace starts a comment that runs to the end of the line; a `#` inside a word "
        "(like `color=#fff`) is part of the value.",
        "test": """from inifile.parser import parse


def test_inline_comments():
    text = "[server]\\nport = 8080 ; default port\\nhost = example.org # public\\ncolor = #fff\\n"
    assert parse(text) == {"server": {"port": "8080", "host": "example.org", "color": "#fff"}}
""",
    },
    {
        "id": "inifile-error-line",
        "difficulty": "medium",
        "split": "dev",
        "edits": [
            (
                "inifile/parser.py",
                """    for number, raw in enumerate(text.splitlines(), start=1):""",
                """    for number, raw in enumerate(text.splitlines()):""",
            )
        ],
        "statement": "`ParseError` reports the wrong line number: for the text '[a]\\nx = 1\\noops\\n' the "
        "error says 'line 2' but the bad line is line 3. Lines are numbered from 1.",
        "test": """import pytest

from inifile.parser import ParseError, parse


def test_line_number():
    with pytest.raises(ParseError) as info:
        parse("[a]\\nx = 1\\noops\\n")
    assert info.value.line == 3 and "line 3" in str(info.value)


def test_first_line():
    with pytest.raises(ParseError) as info:
        parse("garbage")
    assert info.value.line == 1
""",
    },
    {
        "id": "inifile-multiline",
        "difficulty": "hard",
        "split": "dev",
        "edits": [
            (
                "inifile/parser.py",
                """        if raw[:1] in (" ", "\\t") and last_key is not None:
            data[section][last_key] += "\\n" + strip_inline_comment(line)
            continue
""",
                "",
            ),
            (
                "inifile/parser.py",
                """    Lines starting with # or ; are comments. An indented line continues the previous value
    (joined with a newline). Keys before any section go to the section "DEFAULT".""",
                """    Lines starting with # or ; are comments. Keys before any section go to the section "DEFAULT".""",
            ),
            (
                "inifile/writer.py",
                """            first, *rest = str(value).split("\\n")
            lines.append(f"{key} = {first}")
            lines.extend(f"    {line}" for line in rest)""",
                """            lines.append(f"{key} = {value}")""",
            ),
        ],
        "statement": "Support multi-line values. In `parse` (inifile/parser.py), an indented line (starting "
        "with a space or tab) that follows a key continues that key's value; the parts are "
        "joined with a newline, e.g. 'paths = /a\\n    /b' gives 'paths': '/a\\n/b'. And "
        "`dumps` (inifile/writer.py) must write such values so that `parse(dumps(d)) == d`.",
        "test": """from inifile import dumps, parse
from inifile.config import Config


def test_continuation_lines():
    text = "[s]\\npaths = /a\\n    /b ; comment\\n\\t/c\\nname = x\\n"
    assert parse(text) == {"s": {"paths": "/a\\n/b\\n/c", "name": "x"}}


def test_round_trip():
    data = {"DEFAULT": {"a": "1"}, "s": {"paths": "/a\\n/b", "name": "x"}}
    assert parse(dumps(data)) == data


def test_list_of_lines():
    assert Config.from_text("[s]\\nitems =\\n  one\\n  two\\n").getlist("s", "items") == ["one", "two"]
""",
    },
    {
        "id": "inifile-interpolation",
        "difficulty": "hard",
        "split": "heldout",
        "edits": [
            (
                "inifile/config.py",
                '''        """The value with ${key} (same section) and ${section:key} references replaced."""
        value = self.raw(section, key)
        if value is None:
            return default
        return self._expand(section, value, [(section, key.lower())])

    def _expand(self, section: str, value: str, seen: list[tuple[str, str]]) -> str:
        def replace(match: re.Match) -> str:
            ref_section = match.group(1) or section
            ref_key = match.group(2).lower()
            if (ref_section, ref_key) in seen:
                raise InterpolationError(f"circular reference to {ref_section}:{ref_key}")
            raw = self.raw(ref_section, ref_key)
            if raw is None:
                raise InterpolationError(f"no key {ref_key!r} in section {ref_section!r}")
            return self._expand(ref_section, raw, seen + [(ref_section, ref_key)])

        return REFERENCE.sub(replace, value)''',
                '''        """The value with ${key} (same section) and ${section:key} references replaced."""
        value = self.raw(section, key)
        if value is None:
            return default
        return value''',
            )
        ],
        "statement": "`Config.get` (inifile/config.py) should replace references in values, as its "
        "docstring says, but returns values unchanged. `${key}` refers to a key of the same "
        "section (or DEFAULT), `${section:key}` to a key of another section; references "
        "nest (a referenced value may itself hold references). A reference to a missing "
        "key, or a cycle of references, raises `InterpolationError`. The typed getters "
        "(`getint`, ...) must see the replaced values.",
        "test": '''import pytest

from inifile.config import Config, InterpolationError

TEXT = """
[DEFAULT]
root = /srv
[paths]
data = ${root}/data
cache = ${data}/cache
[app]
log = ${paths:data}/log
workers = ${n}
n = 4
loop_a = ${loop_b}
loop_b = ${loop_a}
missing = ${nowhere:x}
"""


def test_references():
    config = Config.from_text(TEXT)
    assert config.get("paths", "cache") == "/srv/data/cache"
    assert config.get("app", "log") == "/srv/data/log"
    assert config.getint("app", "workers") == 4


def test_errors():
    config = Config.from_text(TEXT)
    with pytest.raises(InterpolationError):
        config.get("app", "loop_a")
    with pytest.raises(InterpolationError):
        config.get("app", "missing")
''',
    },
]
