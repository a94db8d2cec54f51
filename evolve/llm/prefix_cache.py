"""Saved model contexts keyed by their tokens, so interleaved conversations keep their prefixes.

llama.cpp keeps one context: a request reuses only the prefix it shares with the request before. When
two jobs interleave, each request evicts the other's conversation and every turn re-reads its whole
prompt (about 5,600 tokens for an improve step, a minute on 2 cores). The server saves a context's
key-value state here before another conversation overwrites it, and a later request whose tokens
extend a saved one restores it and reads only what is new.

Bounded by bytes, least recently used first out. A saved context that is a prefix of a newer one is
dropped when the newer one is saved: the newer one serves every request the older one could.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass


def common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    """How many leading tokens `a` and `b` share."""
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


@dataclass(frozen=True)
class SavedContext:
    """The tokens of one context and its key-value state as llama.cpp serialised it."""

    tokens: tuple[int, ...]
    state: bytes

    @property
    def size(self) -> int:
        return len(self.state) + 8 * len(self.tokens)


@dataclass(frozen=True)
class Match:
    """The saved context that shares the most leading tokens with a request, and how many."""

    saved: SavedContext
    shared: int


class PrefixCache:
    """Saved contexts within `capacity_bytes`, least recently used evicted first."""

    def __init__(self, capacity_bytes: int) -> None:
        self.capacity_bytes = capacity_bytes
        self._saved: OrderedDict[tuple[int, ...], SavedContext] = OrderedDict()

    @property
    def size(self) -> int:
        return sum(s.size for s in self._saved.values())

    def __len__(self) -> int:
        return len(self._saved)

    def best(self, tokens: Sequence[int]) -> Match | None:
        """The saved context sharing the longest prefix with `tokens` (marked as recently used)."""
        found = max(
            (Match(s, common_prefix(s.tokens, tokens)) for s in self._saved.values()),
            key=lambda m: m.shared,
            default=None,
        )
        if found is None or found.shared == 0:
            return None
        self._saved.move_to_end(found.saved.tokens)
        return found

    def save(self, saved: SavedContext) -> None:
        """Keep `saved`; drop the contexts it extends, then the least recently used over capacity."""
        if saved.size > self.capacity_bytes:
            return
        for key in [k for k in self._saved if len(k) <= len(saved.tokens) and saved.tokens[: len(k)] == k]:
            del self._saved[key]
        self._saved[saved.tokens] = saved
        while self.size > self.capacity_bytes:
            self._saved.popitem(last=False)
