"""Word statistics."""

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
