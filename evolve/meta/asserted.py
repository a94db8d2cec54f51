"""The agent's lines that hold a key its failing own tests read: information-retrieval fault localization,
with the failing tests' own code as the query.

A failing test that reads `sent["messages"][1]["content"]` and finds the wrong thing there points at the code
that put a value under `"messages"`. Spectra cannot tell that line apart when every test runs it (a request
built for every call of the model); the test's text can. Each string used as a subscript key in a failing
test's source, as pytest reports it (the test function's lines, the failing one marked `>`), is looked up
among the string constants of the lines the failing tests ran; a line scores, over the keys it holds, the sum
of 1 / the number of those lines holding the key (IDF, as the bug-report retrieval of BugLocator weighs a
term: a key one line holds points there alone, one that twenty lines hold points nowhere).

The report is written by the agent's tests in its sandbox: this only orders the lines the screen edits.

Pure: the reports and sources in, scores out.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping

from evolve import syntax
from evolve.meta.locations import Line

KEY_CHARS = 64
"""A key longer than this is text, not a key."""
MARKS = ("> ", ">\t")
"""How pytest marks the failing line of a test's source in its report."""


def asserted_keys(report: str) -> frozenset[str]:
    """The strings a failing test's report shows its source using as subscript keys (`x["key"]`): each line
    of the source part (not pytest's `E` explanation lines) parsed alone, the failing line's mark removed; a
    line that does not parse alone (part of a longer statement) gives none."""
    keys: set[str] = set()
    for raw in report.splitlines():
        if raw.startswith(("E ", "E\t")):
            continue
        text = raw[1:] if raw.startswith(MARKS) else raw
        tree = syntax.parsed(text.strip())
        if tree is None:
            continue
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Subscript)
                and isinstance(node.slice, ast.Constant)
                and isinstance(node.slice.value, str)
                and 0 < len(node.slice.value) <= KEY_CHARS
            ):
                keys.add(node.slice.value)
    return frozenset(keys)


def keyed_lines(sources: Mapping[str, str], ran: Iterable[Line], keys: frozenset[str]) -> dict[Line, float]:
    """The lines of `ran` (in `sources`, the agent's files by path) holding a string constant equal to one of
    `keys`, each with the sum over the keys it holds of 1 / the number of those lines holding that key."""
    if not keys:
        return {}
    wanted = set(ran)
    holding: dict[str, set[Line]] = {}
    for path in sorted({path for path, _ in wanted}):
        tree = syntax.parsed(sources.get(path, ""))
        if tree is None:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in keys:
                line = (path, node.lineno)
                if line in wanted:
                    holding.setdefault(node.value, set()).add(line)
    scores: dict[Line, float] = {}
    for lines in holding.values():
        for line in lines:
            scores[line] = scores.get(line, 0.0) + 1 / len(lines)
    return scores
