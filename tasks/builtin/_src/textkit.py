PROJECT = "textkit"

BASE = {
    "README.md": """# textkit

Small text utilities: slugs, roman numerals, case conversion, word wrapping and word statistics.
Run the tests with `python3 -m pytest -q`.
""",
    "textkit/__init__.py": '''"""textkit: small text utilities."""

from textkit.case import camel_to_snake, snake_to_camel
from textkit.roman import from_roman, to_roman
from textkit.slug import slugify
from textkit.stats import word_frequencies
from textkit.wrap import wrap

__all__ = ["camel_to_snake", "snake_to_camel", "from_roman", "to_roman", "slugify", "word_frequencies", "wrap"]
''',
    "textkit/slug.py": '''"""URL slugs."""

import re
import unicodedata


def slugify(text: str, sep: str = "-", max_length: int | None = None) -> str:
    """Lower-case ASCII slug of `text`: runs of other characters become one `sep`, none at the ends.

    >>> slugify("Hello, World!")
    'hello-world'
    """
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    words = re.findall(r"[a-z0-9]+", ascii_text.lower())
    slug = sep.join(words)
    if max_length is not None and len(slug) > max_length:
        slug = slug[:max_length].rstrip(sep)
    return slug
''',
    "textkit/roman.py": '''"""Roman numerals (1..3999)."""

NUMERALS = [
    (1000, "M"), (900, "CM"), (500, "D"), (400, "CD"), (100, "C"), (90, "XC"),
    (50, "L"), (40, "XL"), (10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I"),
]
VALUES = {"I": 1, "V": 5, "X": 10, "L": 50, "C": 100, "D": 500, "M": 1000}


def to_roman(number: int) -> str:
    """The roman numeral for `number` (1..3999), e.g. 1994 -> 'MCMXCIV'; ValueError outside the range."""
    if not 1 <= number <= 3999:
        raise ValueError(f"{number} is out of range 1..3999")
    parts = []
    for value, symbol in NUMERALS:
        count, number = divmod(number, value)
        parts.append(symbol * count)
    return "".join(parts)


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
''',
    "textkit/case.py": '''"""Identifier case conversion."""

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
    step = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\\1_\\2", name)
    step = re.sub(r"([a-z0-9])([A-Z])", r"\\1_\\2", step)
    return step.lower()
''',
    "textkit/wrap.py": '''"""Greedy word wrapping."""


def wrap(text: str, width: int) -> list[str]:
    """Split `text` into lines of at most `width` characters, breaking at spaces.

    Words longer than `width` are cut into pieces of `width` characters. Blank lines in `text`
    separate paragraphs and are kept as empty strings in the result.
    """
    if width < 1:
        raise ValueError("width must be at least 1")
    lines: list[str] = []
    for n, paragraph in enumerate(text.split("\\n\\n")):
        if n:
            lines.append("")
        current = ""
        for word in paragraph.split():
            while len(word) > width:
                if current:
                    lines.append(current)
                    current = ""
                lines.append(word[:width])
                word = word[width:]
            if not current:
                current = word
            elif len(current) + 1 + len(word) <= width:
                current += " " + word
            else:
                lines.append(current)
                current = word
        if current:
            lines.append(current)
    return lines
''',
    "textkit/stats.py": '''"""Word statistics."""

import re
from collections import Counter

WORD = re.compile(r"[A-Za-z0-9']+")


def words(text: str) -> list[str]:
    """The words of `text`, lower-cased, with surrounding apostrophes removed."""
    return [w.strip("'").lower() for w in WORD.findall(text) if w.strip("'")]


def word_frequencies(text: str, top: int | None = None, stopwords: set[str] | None = None) -> list[tuple[str, int]]:
    """(word, count) pairs, most frequent first, ties in alphabetical order; `stopwords` are left out."""
    skip = {w.lower() for w in stopwords or ()}
    counts = Counter(w for w in words(text) if w not in skip)
    ranked = sorted(counts.items(), key=lambda pair: (-pair[1], pair[0]))
    return ranked[:top] if top is not None else ranked


def reading_time(text: str, words_per_minute: int = 200) -> int:
    """Whole minutes needed to read `text`, at least 1."""
    return max(1, round(len(words(text)) / words_per_minute))
''',
    "tests/test_basics.py": """from textkit import slugify, snake_to_camel


def test_slug_simple():
    assert slugify("Hello World") == "hello-world"


def test_snake_to_camel():
    assert snake_to_camel("parse_http_header") == "parseHttpHeader"
    assert snake_to_camel("parse_http_header", upper_first=True) == "ParseHttpHeader"
""",
}

TASKS = [
    {
        "id": "textkit-to-roman",
        "difficulty": "easy",
        "split": "dev",
        "stubs": [("textkit/roman.py", "to_roman")],
        "statement": "Implement `to_roman(number)` in `textkit/roman.py`: it returns the roman numeral of "
        "an integer from 1 to 3999 (for example 1994 -> 'MCMXCIV', 4 -> 'IV') and raises "
        "ValueError for numbers outside that range.",
        "test": """import pytest

from textkit.roman import to_roman


@pytest.mark.parametrize("n, text", [(1, "I"), (4, "IV"), (9, "IX"), (14, "XIV"), (40, "XL"), (90, "XC"),
                                     (400, "CD"), (1994, "MCMXCIV"), (2024, "MMXXIV"), (3999, "MMMCMXCIX")])
def test_values(n, text):
    assert to_roman(n) == text


@pytest.mark.parametrize("n", [0, -3, 4000])
def test_range(n):
    with pytest.raises(ValueError):
        to_roman(n)
""",
    },
    {
        "id": "textkit-camel-to-snake",
        "difficulty": "easy",
        "split": "dev",
        "stubs": [("textkit/case.py", "camel_to_snake")],
        "statement": "Implement `camel_to_snake(name)` in `textkit/case.py` as its docstring describes: "
        "'parseHTTPHeader' -> 'parse_http_header', 'HTMLParser' -> 'html_parser', "
        "'version2Id' -> 'version2_id', 'simple' -> 'simple'.",
        "test": """import pytest

from textkit.case import camel_to_snake


@pytest.mark.parametrize("name, snake", [("simple", "simple"), ("camelCase", "camel_case"),
                                         ("CamelCase", "camel_case"), ("parseHTTPHeader", "parse_http_header"),
                                         ("HTMLParser", "html_parser"), ("version2Id", "version2_id"),
                                         ("getX", "get_x")])
def test_cases(name, snake):
    assert camel_to_snake(name) == snake
""",
    },
    {
        "id": "textkit-slug-separators",
        "difficulty": "medium",
        "split": "dev",
        "edits": [
            (
                "textkit/slug.py",
                """    words = re.findall(r"[a-z0-9]+", ascii_text.lower())
    slug = sep.join(words)""",
                """    slug = re.sub(r"[^a-z0-9]", sep, ascii_text.lower())""",
            )
        ],
        "statement": "Bug: `slugify` in textkit produces slugs like 'hello--world-' for 'Hello, World!' "
        "instead of 'hello-world'. Runs of characters that are not letters or digits must "
        "become a single separator, and the slug must not start or end with a separator.",
        "test": """from textkit.slug import slugify


def test_punctuation_collapses():
    assert slugify("Hello, World!") == "hello-world"
    assert slugify("  --Already -- slugged--  ") == "already-slugged"


def test_accents_and_custom_separator():
    assert slugify("Crème Brûlée à la carte", sep="_") == "creme_brulee_a_la_carte"


def test_max_length_does_not_end_in_separator():
    assert slugify("The quick brown fox", max_length=10) == "the-quick"
""",
    },
    {
        "id": "textkit-roman-validation",
        "difficulty": "medium",
        "split": "heldout",
        "edits": [
            (
                "textkit/roman.py",
                """    if not 1 <= total <= 3999 or to_roman(total) != text:
        raise ValueError(f"not a canonical roman numeral: {text!r}")
""",
                "",
            )
        ],
        "statement": "`from_roman` in `textkit/roman.py` accepts malformed numerals such as 'IIII', 'VX' "
        "or 'IC' and returns a number for them. It must raise ValueError for any text that is "
        "not the canonical (standard) roman numeral of its value, and keep working for valid "
        "numerals such as 'MCMXCIV' (1994) and lower-case input like 'xiv'.",
        "test": """import pytest

from textkit.roman import from_roman


@pytest.mark.parametrize("text, n", [("I", 1), ("xiv", 14), ("MCMXCIV", 1994), ("MMMCMXCIX", 3999)])
def test_valid(text, n):
    assert from_roman(text) == n


@pytest.mark.parametrize("text", ["IIII", "VX", "IC", "MMMM", "", "ABC", "XXL"])
def test_invalid(text):
    with pytest.raises(ValueError):
        from_roman(text)
""",
    },
    {
        "id": "textkit-wrap-long-words",
        "difficulty": "hard",
        "split": "dev",
        "edits": [
            (
                "textkit/wrap.py",
                """    lines: list[str] = []
    for n, paragraph in enumerate(text.split("\\n\\n")):
        if n:
            lines.append("")
        current = ""
        for word in paragraph.split():
            while len(word) > width:
                if current:
                    lines.append(current)
                    current = ""
                lines.append(word[:width])
                word = word[width:]
            if not current:
                current = word
            elif len(current) + 1 + len(word) <= width:
                current += " " + word
            else:
                lines.append(current)
                current = word
        if current:
            lines.append(current)
    return lines""",
                """    lines: list[str] = []
    current = ""
    for word in text.split():
        if not current:
            current = word
        elif len(current) + 1 + len(word) <= width:
            current += " " + word
        else:
            lines.append(current)
            current = word
    if current:
        lines.append(current)
    return lines""",
            )
        ],
        "statement": "`wrap(text, width)` in `textkit/wrap.py` does not do what its docstring promises: "
        "words longer than `width` end up on lines longer than `width`, and paragraphs "
        "(separated by a blank line) are run together. Make it match the docstring.",
        "test": """from textkit.wrap import wrap


def test_plain():
    assert wrap("the quick brown fox jumps", 10) == ["the quick", "brown fox", "jumps"]


def test_long_words_are_cut():
    assert wrap("a supercalifragilistic word", 8) == ["a", "supercal", "ifragili", "stic", "word"]
    assert all(len(line) <= 8 for line in wrap("x" * 30, 8))


def test_paragraphs():
    assert wrap("one two\\n\\nthree four", 7) == ["one two", "", "three", "four"]
""",
    },
    {
        "id": "textkit-stopwords",
        "difficulty": "medium",
        "split": "heldout",
        "edits": [
            (
                "textkit/stats.py",
                '''def word_frequencies(text: str, top: int | None = None, stopwords: set[str] | None = None) -> list[tuple[str, int]]:
    """(word, count) pairs, most frequent first, ties in alphabetical order; `stopwords` are left out."""
    skip = {w.lower() for w in stopwords or ()}
    counts = Counter(w for w in words(text) if w not in skip)''',
                '''def word_frequencies(text: str, top: int | None = None) -> list[tuple[str, int]]:
    """(word, count) pairs, most frequent first, ties in alphabetical order."""
    counts = Counter(words(text))''',
            )
        ],
        "statement": "Add a `stopwords` parameter to `word_frequencies` in `textkit/stats.py` (a set of "
        "words, default None): those words are left out of the counts, compared "
        "case-insensitively (a stopword 'The' also removes 'the').",
        "test": """from textkit.stats import word_frequencies


def test_stopwords_are_removed_case_insensitively():
    text = "The cat and the hat. The end and the start"
    assert word_frequencies(text, stopwords={"The", "and"}) == [("cat", 1), ("end", 1), ("hat", 1), ("start", 1)]


def test_top_still_works():
    assert word_frequencies("b a b c c c", top=2) == [("c", 3), ("b", 2)]
    assert word_frequencies("b a b", stopwords=None) == [("b", 2), ("a", 1)]
""",
    },
]
