"""`None` made text: a location source from the values a failing run read.

An agent that formats a value into what it shows the model (an f-string) shows the word `None` where that
value was never set: a command run without capturing its output shows `NoneNone`, a lookup that missed
shows `None`. The line runs in passing evaluations as in failing ones, so spectra rank it no higher than any
other, and `None` is no text the provenance can trace. The coverage probe records what each line read the
first time a replay ran it (evolve.engine.line_values); where a failing replay read `None` from an
expression that its line's f-string formats, and sent the model that f-string as it rendered (a header or a
log line is no place), that line is ranked at the share of failing replays that did, and so is the line
above it that bound the expression's root name (the call whose result lacked the value), just below it.

Nothing here knows an agent: it reads Python's syntax tree and the probe's values. Pure: sources and values
in, locations out.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator, Mapping, Sequence

from evolve import syntax
from evolve.meta.locations import Line, Location
from evolve.meta.mutant import bindings, enclosing, short
from evolve.meta.spectra import Values

__all__ = ["BOUND_SHARE", "SHOWN_CHARS", "none_locations"]

SHOWN_CHARS = 8
"""The fixed text (literal pieces and `None`s) an f-string must render for its sending to be told apart."""
BOUND_SHARE = 0.9
"""The line that bound a value shown as `None`, scored this much of the line that showed it."""


def none_locations(
    sources: Mapping[str, str], runs: Sequence[tuple[Mapping[Line, Values], str]]
) -> list[Location]:
    """The lines of the agent (`sources`: its files by path) whose f-string made a value read as `None` text
    that the model was sent, in any of the failing replays (`runs`: each one's values by line and the text
    it sent the model), at the share of them that did, and the lines that bound the value's root name
    above them, at BOUND_SHARE of that."""
    if not runs:
        return []
    trees = {path: tree for path, text in sources.items() if (tree := syntax.parsed(text)) is not None}
    seen: dict[Line, list[str]] = {}  # per line: the first expression read as None and shown, per run
    for values, sent in runs:
        for (path, number), pairs in values.items():
            tree = trees.get(path)
            nones = {expression for expression, value in pairs if value == "None"}
            if tree is None or not nones:
                continue
            shown = [
                expression
                for text in _f_strings(tree, number)
                if (expression := _shown_none(text, nones, sent)) is not None
            ]
            if shown:
                seen.setdefault((path, number), []).append(shown[0])
    found: list[Location] = []
    for (path, number), expressions in seen.items():
        share = round(len(expressions) / len(runs), 4)
        said = (
            f"as {len(expressions)} of {len(runs)} failing replays ran it, `{short(expressions[0])}` was "
            "None and is made text here, and the model was sent that text: the word None where a value "
            "was meant"
        )
        found.append(Location(path, number, share, said))
        bound = _bound_at(trees[path], number, expressions[0])
        if bound is not None:
            found.append(Location(path, bound, round(share * BOUND_SHARE, 4), f"{said}; this line binds it"))
    return found


def _f_strings(tree: ast.Module, line: int) -> Iterator[ast.JoinedStr]:
    """The f-strings of the statement at `line`."""
    for node in ast.walk(tree):
        if isinstance(node, ast.stmt) and node.lineno == line:
            yield from (inner for inner in ast.walk(node) if isinstance(inner, ast.JoinedStr))


def _shown_none(text: ast.JoinedStr, nones: set[str], sent: str) -> str | None:
    """The first field of `text` read as None (`nones`: the expressions that were) where `sent` holds the
    f-string as it rendered (its literal pieces, `None` for those fields, anything for the others) with at
    least SHOWN_CHARS of it fixed; None where it does not."""
    pattern, fixed, first = [], 0, None
    for part in text.values:
        if isinstance(part, ast.Constant) and isinstance(part.value, str):
            pattern.append(re.escape(part.value))
            fixed += len(part.value)
        elif isinstance(part, ast.FormattedValue) and (expression := ast.unparse(part.value)) in nones:
            pattern.append("None")
            fixed += 4
            first = first or expression
        else:
            pattern.append(".{0,200}?")
    if first is None or fixed < SHOWN_CHARS:
        return None
    return first if re.search("".join(pattern), sent, re.DOTALL) else None


def _bound_at(tree: ast.Module, line: int, expression: str) -> int | None:
    """The line of the latest binding above `line` of the local the expression starts with (`done` of
    `done.stdout`); None where it is no local bound above."""
    try:
        root = ast.parse(expression, mode="eval").body
    except SyntaxError:  # the probe cuts a long expression: no name to follow
        return None
    while isinstance(root, ast.Attribute | ast.Subscript):
        root = root.value
    function = enclosing(tree, line)
    if not isinstance(root, ast.Name) or function is None:
        return None
    bound = bindings(function, tree, line).get(root.id)
    return bound if bound is not None and bound != function.lineno else None
