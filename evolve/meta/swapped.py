"""Arguments passed in the wrong order: a static source of suspicious lines, and the template that swaps them.

A call whose arguments are named as the callee's parameters, but in another order (`copy(target, source)`
for `def copy(source, target)`), almost always passes them swapped (Rice et al., "Detecting argument
selection defects", OOPSLA 2017: names are the evidence). It runs in passing runs as in failing ones;
where a failing run ran it, it is ranked (`swapped_locations`). The `swap` template (`swaps`) exchanges two
positional arguments of a call: the named pair first, then each pair of neighbours that differ.

The callee's parameters are read from its definitions in the agent's files (every definition of that name
agreeing); an argument's name is a local's, or an attribute's last part (`self.source`). Nothing here knows
an agent. Pure: trees in, data and mutants out.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass

from evolve.meta.locations import Line, Location, ran_at
from evolve.meta.mutant import Mutant, callee, short

__all__ = ["SWAPPED_SCORE", "SWAPS", "Swapped", "swapped", "swapped_locations", "swaps"]

SWAPPED_SCORE = 0.9
"""A call a failing run ran whose arguments are its callee's parameters' names in another order."""
SWAPS = 3
"""The swaps the template offers at one call at most."""


@dataclass(frozen=True)
class Swapped:
    """The call at `line` of `path` passes `first` where the callee takes `second`, and `second` where it
    takes `first`."""

    path: str
    line: int
    call: str
    first: str
    second: str


def swapped(path: str, tree: ast.Module, donors: Sequence[ast.Module]) -> list[Swapped]:
    """One module's calls of the agent's functions that pass two arguments named as each other's
    parameters (`path`: its file, `donors`: every file of the agent, for the definitions), in line order."""
    index = _definitions(donors)
    found = []
    for call in ast.walk(tree):
        if isinstance(call, ast.Call):
            pair = _named_pair(call, index)
            if pair is not None:
                i, j = pair
                first, second = _name(call.args[i]), _name(call.args[j])
                found.append(Swapped(path, call.lineno, ast.unparse(call), str(first), str(second)))
    return sorted(set(found), key=lambda item: (item.line, item.call))


def swapped_locations(found: Iterable[Swapped], ran: AbstractSet[Line]) -> list[Location]:
    """Each such call a failing run ran (`ran`: the lines it ran), at SWAPPED_SCORE."""
    return ran_at(
        found,
        ran,
        SWAPPED_SCORE,
        lambda item: (
            f"`{short(item.call)}` passes `{item.first}` where its callee takes `{item.second}`, "
            f"and `{item.second}` where it takes `{item.first}`: the two may be swapped"
        ),
    )


def swaps(node: ast.AST, tree: ast.Module, donors: list[ast.Module]) -> Iterator[Mutant]:
    """The `swap` template at a call: two of its positional arguments exchanged, the pair named as each
    other's parameters first, then each pair of neighbours whose texts differ, SWAPS at most."""
    if not isinstance(node, ast.Call) or any(isinstance(a, ast.Starred) for a in node.args):
        return
    named = _named_pair(node, _definitions(donors))
    pairs = ([named] if named is not None else []) + [(i, i + 1) for i in range(len(node.args) - 1)]
    offered: set[tuple[int, int]] = set()
    for i, j in pairs:
        if (i, j) in offered or len(offered) == SWAPS:
            continue
        if ast.dump(node.args[i]) == ast.dump(node.args[j]):
            continue
        offered.add((i, j))
        args = list(node.args)
        args[i], args[j] = args[j], args[i]
        change = f"swapped: {short(ast.unparse(node.args[i]))} <-> {short(ast.unparse(node.args[j]))}"
        yield Mutant(node, "swap", ast.Call(node.func, args, node.keywords), change)


def _named_pair(call: ast.Call, index: Mapping[str, list[list[str]]]) -> tuple[int, int] | None:
    """The first two positional arguments of `call` named as each other's parameters of its callee (`index`:
    the agent's definitions' positional parameters by name)."""
    if any(isinstance(a, ast.Starred) for a in call.args) or len(call.args) < 2:
        return None
    parameters = _parameters(call, index)
    if parameters is None:
        return None
    names = [_name(arg) for arg in call.args]
    for i, name in enumerate(names[: len(parameters)]):
        for j in range(i + 1, min(len(names), len(parameters))):
            if name is not None and name != names[j] and name == parameters[j] and names[j] == parameters[i]:
                return i, j
    return None


def _definitions(donors: Sequence[ast.Module]) -> dict[str, list[list[str]]]:
    """Each function or method name of the agent's files, with the positional parameters of each of its
    definitions."""
    index: dict[str, list[list[str]]] = {}
    for donor in donors:
        for function in ast.walk(donor):
            if isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
                names = [a.arg for a in (*function.args.posonlyargs, *function.args.args)]
                index.setdefault(function.name, []).append(names)
    return index


def _parameters(call: ast.Call, index: Mapping[str, list[list[str]]]) -> list[str] | None:
    """The positional parameters of `call`'s callee as its call fills them (a method's `self` or `cls`
    left out when called on a receiver), where every definition of that name in the agent agrees."""
    func = call.func
    if not isinstance(func, ast.Name | ast.Attribute):
        return None
    found = [
        names[1:] if isinstance(func, ast.Attribute) and names and names[0] in ("self", "cls") else names
        for names in index.get(callee(call), [])
    ]
    if not found or any(names != found[0] for names in found):
        return None
    return found[0]


def _name(arg: ast.expr) -> str | None:
    """An argument's name: a local's, or an attribute's last part."""
    if isinstance(arg, ast.Name):
        return arg.id
    if isinstance(arg, ast.Attribute):
        return arg.attr
    return None
