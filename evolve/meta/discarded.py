"""Values computed and thrown away: a static source of suspicious lines, and the template that keeps them.

A string is never changed in place: `text.strip()` made a statement of its own computes a new string and
drops it (pylint's expression-not-assigned, for a call), and so do `sorted(items)` and `reversed(items)`.
In code that otherwise means what it writes, such a statement is where an assignment was lost: `text =
text.strip()` made `text.strip()`, and every line after it reads the value unchanged. It runs in passing
runs as in failing ones, so spectra rank it no higher than its neighbours; where a failing run ran it, it is
ranked (`discarded_locations`), and the `keep` template (`keeps`) stores the value back where it came
from.

What counts: an expression statement that is a call, on a name or an attribute (the receiver, which gets
the value) that no import binds, of one of Python's `str` methods that return a changed copy (`strip`,
`replace`, `lower`, `format`, ...; Python's names, not an agent's), or a call of `sorted` or `reversed` on
one. `os.replace(...)` is a module's function, and a `replace` without `str.replace`'s arguments (old, new
and a literal count) another type's (`Path.replace(target)` moves a file). Another type may name a method
alike and change itself in place (a rich `Text`'s `rstrip`): the ranking only chooses where to look.
Nothing here knows an agent. Pure: trees in, data and mutants out.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator
from collections.abc import Set as AbstractSet
from dataclasses import dataclass

from evolve.meta.locations import Line, Location, ran_at
from evolve.meta.mutant import Mutant, short

__all__ = ["DISCARDED_SCORE", "Discarded", "discarded", "discarded_locations", "keeps"]

DISCARDED_SCORE = 0.9
"""A statement a failing run ran that drops the value it computed: as suspicious as a dead store."""

_METHODS = frozenset(
    {
        *("strip", "lstrip", "rstrip", "removeprefix", "removesuffix", "replace", "expandtabs", "translate"),
        *("lower", "upper", "title", "capitalize", "casefold", "swapcase"),
        *("center", "ljust", "rjust", "zfill", "format", "format_map"),
    }
)
"""Python's `str` (and `bytes`) methods that return a changed copy of the string they are called on (not its
parts, a verdict or a count: a string is never changed in place)."""
_BUILTINS = frozenset({"sorted", "reversed"})
"""Builtins that return a new value from the one they are given and change nothing."""


@dataclass(frozen=True)
class Discarded:
    """The statement at `line` of `path` computes a new value from `target` (its text) and drops it."""

    path: str
    line: int
    target: str
    call: str


def discarded(path: str, tree: ast.Module) -> list[Discarded]:
    """One module's statements that drop the value their call computed (`path`: its file), in line order."""
    found = []
    modules = _imported(tree)
    for statement in ast.walk(tree):
        if isinstance(statement, ast.Expr) and (target := _target(statement.value, modules)) is not None:
            text = ast.unparse(statement.value)
            found.append(Discarded(path, statement.lineno, ast.unparse(target), text))
    return sorted(found, key=lambda item: item.line)


def discarded_locations(found: Iterable[Discarded], ran: AbstractSet[Line]) -> list[Location]:
    """Each such statement a failing run ran (`ran`: the lines it ran), at DISCARDED_SCORE."""
    return ran_at(
        found,
        ran,
        DISCARDED_SCORE,
        lambda item: (
            f"`{short(item.call)}` computes a new value and this statement drops it: "
            f"`{short(item.target)}` is unchanged after it (an assignment may be lost)"
        ),
    )


def keeps(node: ast.AST, tree: ast.Module, donors: list[ast.Module]) -> Iterator[Mutant]:
    """The `keep` template at a statement that drops the value its call computed: `x = x.m(...)` (or `x =
    sorted(x)`), the value stored back where it came from."""
    if not isinstance(node, ast.Expr) or (target := _target(node.value, _imported(tree))) is None:
        return
    stored = ast.Assign([_stored(target)], node.value, lineno=node.lineno)  # unparse reads the line
    text = ast.unparse(target)
    yield Mutant(node, "keep", stored, f"kept: {short(text)} = {short(ast.unparse(node.value))}")


def _target(value: ast.expr, modules: AbstractSet[str]) -> ast.Name | ast.Attribute | None:
    """The name or attribute a dropped call computed its value from (not rooted at a name in `modules`, the
    names imports bind); None for any other expression."""
    if not isinstance(value, ast.Call) or any(isinstance(a, ast.Starred) for a in value.args):
        return None
    func = value.func
    if isinstance(func, ast.Attribute) and func.attr in _METHODS:
        if func.attr == "replace" and not _replaces(value):
            return None
        root = func.value
        while isinstance(root, ast.Attribute):
            root = root.value
        if isinstance(root, ast.Name) and root.id in modules:
            return None
        return func.value if isinstance(func.value, ast.Name | ast.Attribute) else None
    if isinstance(func, ast.Name) and func.id in _BUILTINS and len(value.args) == 1 and not value.keywords:
        argument = value.args[0]
        return argument if isinstance(argument, ast.Name | ast.Attribute) else None
    return None


def _replaces(call: ast.Call) -> bool:
    """Whether a `replace` call has `str.replace`'s arguments: old and new, and a count that is no string."""
    count = call.args[2:]
    return (
        not call.keywords
        and len(call.args) in (2, 3)
        and not any(isinstance(c, ast.Constant) and not isinstance(c.value, int) for c in count)
        and not any(isinstance(c, ast.Name | ast.Attribute | ast.Call | ast.JoinedStr) for c in count)
    )


def _imported(tree: ast.Module) -> set[str]:
    """The names a module's imports bind."""
    return {
        (alias.asname or alias.name).split(".")[0]
        for statement in ast.walk(tree)
        if isinstance(statement, ast.Import | ast.ImportFrom)
        for alias in statement.names
    }


def _stored(target: ast.Name | ast.Attribute) -> ast.expr:
    if isinstance(target, ast.Name):
        return ast.Name(target.id, ast.Store())
    return ast.Attribute(target.value, target.attr, ast.Store())
