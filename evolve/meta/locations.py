"""Ranked places in an agent's code: what fault localization hands to the diagnosis and the repair step.

A location is a line of one of the agent's files (a path relative to the agent's root), a score (higher is
more suspicious; comparable only within one ranking) and the evidence that put it there, said in a line a
person or a model can read. Locations travel as JSON in `instructions.json` beside the instructions text,
so the repair step reads them as data.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from typing import Protocol, TypeVar

Line = tuple[str, int]
"""A line of the agent's code: its file (relative to the agent's root) and 1-based number."""


@dataclass(frozen=True)
class Location:
    """One ranked line of the agent's code."""

    path: str
    """The file, relative to the agent's root (POSIX separators)."""
    line: int
    """1-based line number in that file."""
    score: float
    """How suspicious the line is; higher first."""
    evidence: str
    """Why it is ranked: the data that points at it, in one line."""
    tests: tuple[str, ...] = ()
    """The agent's own failing tests that ran the line (pytest's ids, `tests/test_x.py::test_y`), if any."""
    sources: int = field(default=1, compare=False)
    """The sources that ranked the line, counted through every merge (evolve.meta.locate: the tie-break);
    not part of its JSON, whose order already holds the ranking."""

    def to_json(self) -> dict:
        found = {"path": self.path, "line": self.line, "score": self.score, "evidence": self.evidence}
        return {**found, "tests": list(self.tests)} if self.tests else found

    @classmethod
    def from_json(cls, data: object) -> Location | None:
        """A location from untrusted JSON, or None when it is not one (wrong keys or types)."""
        if not isinstance(data, dict):
            return None
        path, line, score, evidence = (data.get(k) for k in ("path", "line", "score", "evidence"))
        if not (
            isinstance(path, str)
            and isinstance(line, int)
            and not isinstance(line, bool)
            and isinstance(score, (int, float))
            and not isinstance(score, bool)
            and isinstance(evidence, str)
        ):
            return None
        if line < 1 or not path or path.startswith("/") or ".." in path.split("/"):
            return None
        tests = data.get("tests", [])
        named = tuple(t for t in tests if isinstance(t, str)) if isinstance(tests, list) else ()
        return cls(path, line, float(score), evidence, named)


class Placed(Protocol):
    """A finding of a static source: a line of one of the agent's files."""

    @property
    def path(self) -> str: ...
    @property
    def line(self) -> int: ...


P = TypeVar("P", bound=Placed)


def ran_at(
    found: Iterable[P], ran: AbstractSet[Line], score: float, said: Callable[[P], str]
) -> list[Location]:
    """Each finding a failing run ran (`ran`: the lines it ran), at `score`, `said` of it as its evidence: how
    every static source (a dead store, a deviant, code cut off, ...) becomes locations."""
    return [
        Location(item.path, item.line, score, said(item)) for item in found if (item.path, item.line) in ran
    ]


def in_turns(lines: Iterable[Line], key: Callable[[Line], tuple]) -> list[Line]:
    """`lines` ordered by `key` (lowest first), and each run of equal keys taken in turns: every file's first
    line (in path order), then every file's second, and so on. A tie is then never settled by file names
    alone: a file of many innocent lines cannot fill the head before the next file has one."""
    order = sorted(lines, key=lambda line: (key(line), line))
    turns: list[Line] = []
    start = 0
    while start < len(order):
        end = start
        while end < len(order) and key(order[end]) == key(order[start]):
            end += 1
        nth: dict[str, int] = {}
        turn = {}
        for line in order[start:end]:
            nth[line[0]] = turn[line] = nth.get(line[0], 0) + 1
        turns += sorted(order[start:end], key=lambda line: (turn[line], line))
        start = end
    return turns
