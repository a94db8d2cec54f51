"""Fix ingredients from the agent's own code (the plastic-surgery hypothesis; SimFix, ssFix): an expression
at a ranked line whose twin elsewhere in the agent has the same shape -- the same operators, constants,
attributes and outside names, its locals renamed one to one -- but for one part (the smallest that holds
every difference) gets the twin's version of that part, the twin's locals renamed to this expression's.
With `parts[offset(y):len(parts)]` elsewhere, `items[offset(x):offset(x)]` is offered
`items[offset(x):len(items)]`: a value written right in one place and wrong in another, the right one
borrowed.

A twin must share at least CONTEXT nodes outside the part that differs, so two short expressions that happen
to agree (`x[0]` and `y[i]`) lend nothing; the borrowed part must read only names bound where it goes.

The twins are evidence too (`deviants`): an expression that AGREEING twins or more contradict in one part,
all the same way, is ranked where a failing run ran it, whether or not a test failed there. Pure: trees in,
mutants and locations out.
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Iterable, Iterator, Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from itertools import takewhile

from evolve.meta.locations import Line, Location, ran_at
from evolve.meta.mutant import Mutant, bound_at, enclosing, short

__all__ = [
    "AGREEING",
    "CONTEXT",
    "DEVIANT_SCORE",
    "DIFFERENCES",
    "TWINS",
    "Deviant",
    "deviant_locations",
    "deviants",
    "similar",
]

CONTEXT = 5
"""The nodes a twin shares with the expression outside the part they differ in, at least."""

DIFFERENCES = 4
"""The places a twin may differ in before it is given up (the part borrowed holds them all)."""

TWINS = 4
"""The borrowed parts offered for one expression at most, its own file's twins first."""

LARGEST = 40
"""The most expression nodes an expression may hold to have twins looked for: a twin is a short idiom
written again, and each comparison walks the expression (a generated chain of 900 `+` nested as deep would
cost its square in walks)."""

AGREEING = 2
"""The twins that must say the same against an expression, and none of its twins otherwise, before it is
ranked as a deviant."""

DEVIANT_SCORE = 0.8
"""A deviant line a failing run ran: below a line only failing runs ran (1.0) and a dead store (0.9), above
a line every run ran (evolve.meta.spectra)."""

_SHAPES = (ast.Subscript, ast.Call, ast.BinOp, ast.Compare, ast.BoolOp, ast.IfExp)
"""The expressions that get twins: their parts are values a twin may have right."""

_Path = tuple[tuple[str, int], ...]
"""Where a part is in an expression: each step a field and an index in it (-1: the field is the part)."""

_TAGS = (ast.expr_context, ast.operator, ast.cmpop, ast.boolop, ast.unaryop)
"""Nodes that are a field's value, not a child: compared by type, never an edit's place."""


def similar(node: ast.AST, tree: ast.Module, donors: list[ast.Module]) -> Iterator[Mutant]:
    """Each part of `node` that a twin elsewhere in `donors` has otherwise, the twin's version offered."""
    whole = ast.unparse(node) if isinstance(node, _SHAPES) else ""
    offered: set[str] = set()
    for part, new, other in _twins(node, tree, donors):
        text = ast.unparse(new)
        if text in offered:
            continue
        offered.add(text)
        yield Mutant(
            part,
            "similar",
            new,
            f"{short(ast.unparse(part))} -> {short(text)} in {short(whole)} "
            f"(as in {short(ast.unparse(other))})",
        )
        if len(offered) == TWINS:
            return


@dataclass(frozen=True)
class Deviant:
    """An expression at `line` of `path` whose `twins` twins all have `usual` where it has `part`."""

    path: str
    line: int
    part: str
    usual: str
    twins: int


def deviants(trees: Mapping[str, ast.Module]) -> list[Deviant]:
    """The expressions of the agent's files (`trees`, by path) that AGREEING twins or more contradict in one
    part, every twin the same way (Engler's bugs as deviant behaviour: where code says one thing in several
    places and another in one, the one is suspect), each with what they say."""
    found: list[Deviant] = []
    index = {id(tree): _by_kind(tree) for tree in trees.values()}  # read once, not once for each node
    for path, tree in trees.items():
        donors = [tree, *(other for name, other in trees.items() if name != path)]
        for node in ast.walk(tree):
            said: dict[ast.expr, list[str]] = {}
            for part, new, _ in _twins(node, tree, donors, index):
                said.setdefault(part, []).append(ast.unparse(new))
            found.extend(
                Deviant(path, part.lineno, ast.unparse(part), usual[0], len(usual))
                for part, usual in said.items()
                if len(usual) >= AGREEING and len(set(usual)) == 1 and not _kept(part, usual[0], tree)
            )
    return sorted(found, key=lambda deviant: (deviant.path, deviant.line, -deviant.twins))


def _kept(part: ast.expr, usual: str, tree: ast.Module) -> bool:
    """Whether `part` and the twins' `usual` are a local and the field of the same name (`x` and `self.x`,
    either way) that the part's function stores one into the other (`self.x = x`): one value under two
    names, read either way, not a contradiction."""
    if isinstance(part, ast.Name) and usual.endswith(f".{part.id}"):
        local, stored = part.id, usual
    elif isinstance(part, ast.Attribute) and usual == part.attr:
        local, stored = usual, ast.unparse(part)
    else:
        return False
    function = enclosing(tree, part.lineno)
    return function is not None and any(
        isinstance(node, ast.Assign)
        and isinstance(node.value, ast.Name)
        and node.value.id == local
        and any(ast.unparse(target) == stored for target in node.targets)
        for node in ast.walk(function)
    )


def deviant_locations(found: Iterable[Deviant], ran: AbstractSet[Line]) -> list[Location]:
    """Each deviant a failing run ran (`ran`: the lines it ran), at DEVIANT_SCORE, with what its twins say."""
    return ran_at(
        found,
        ran,
        DEVIANT_SCORE,
        lambda deviant: (
            f"{deviant.twins} other places in the agent write the same expression with "
            f"`{short(deviant.usual)}` where this line has `{short(deviant.part)}`"
        ),
    )


def _twins(
    node: ast.AST,
    tree: ast.Module,
    donors: list[ast.Module],
    index: Mapping[int, Mapping[type, list[tuple[ast.AST, frozenset[str]]]]] | None = None,
) -> Iterator[tuple[ast.expr, ast.expr, ast.AST]]:
    """(the part of `node` that differs, the twin's part renamed, the twin) for each twin of `node` in
    `donors`, the twin's part not the same text as `node`'s; `index`: each donor's `_by_kind`, by its id,
    where the caller has them."""
    if not isinstance(node, _SHAPES) or not CONTEXT < _size(node) <= LARGEST:
        return
    function = enclosing(tree, node.lineno)
    mine = _function_locals(function) if function is not None else frozenset()
    bound = bound_at(tree, node.lineno)
    for donor in donors:
        kinds = index[id(donor)] if index is not None else _by_kind(donor)
        for other, theirs in kinds.get(type(node), ()):
            if other is node:
                continue
            borrowed = _borrowed(node, other, mine, theirs, bound)
            if borrowed is not None and ast.unparse(borrowed[1]) != ast.unparse(borrowed[0]):
                yield (*borrowed, other)


def _by_kind(tree: ast.Module) -> dict[type, list[tuple[ast.AST, frozenset[str]]]]:
    """The expressions of `tree` that may have twins, by type, each with the locals of the function that
    holds it (none at module or class level); an inner function's expressions with its own."""
    scopes: dict[int, frozenset[str]] = {}
    for function in ast.walk(tree):  # breadth first: an inner function comes after the one around it
        if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            names = _function_locals(function)
            for inner in ast.walk(function):
                scopes[id(inner)] = names
    found: dict[type, list[tuple[ast.AST, frozenset[str]]]] = {}
    for node in ast.walk(tree):
        if isinstance(node, _SHAPES):
            found.setdefault(type(node), []).append((node, scopes.get(id(node), frozenset())))
    return found


def _function_locals(function: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> frozenset[str]:
    arguments = function.args
    every = [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]
    names = {a.arg for a in [*every, arguments.vararg, arguments.kwarg] if a is not None}
    names |= {n.id for n in ast.walk(function) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    return frozenset(names)


def _borrowed(
    node: ast.AST, other: ast.AST, mine: frozenset[str], theirs: frozenset[str], bound: set[str]
) -> tuple[ast.expr, ast.expr] | None:
    """(the part of `node` that differs, the twin's part renamed) when `other` is a twin: the smallest
    positioned part holding every difference, outside which their locals pair one to one, leaving CONTEXT
    nodes outside it; the renamed part must read only `bound` names."""
    differences: list[_Path] = []
    pairs: list[tuple[_Path, str, str]] = []
    if not _walk(node, other, (), mine, theirs, differences, pairs) or not differences:
        return None
    common = takewhile(lambda steps: len(set(steps)) == 1, zip(*differences))
    hole = tuple(steps[0] for steps in common)  # the part that holds them all
    while hole:
        part, twin = _at(node, hole), _at(other, hole)
        outside = {(ours, its) for path, ours, its in pairs if path[: len(hole)] != hole}
        ones = len(outside) == len({ours for ours, _ in outside}) == len({its for _, its in outside})
        if ones and isinstance(part, ast.expr) and hasattr(part, "lineno"):
            break
        hole = hole[:-1]  # a local paired two ways, or no place to edit: the part around it
    else:
        return None
    if not isinstance(part, ast.expr) or _size(node) - _size(part) < CONTEXT:
        return None
    renamed = {its: ours for ours, its in outside}
    new = copy.deepcopy(twin)
    assert isinstance(new, ast.expr)
    for name in ast.walk(new):
        if isinstance(name, ast.Name):
            if name.id in theirs and name.id not in renamed and name.id not in mine:
                return None  # a local of the twin's function with no counterpart here
            name.id = renamed.get(name.id, name.id) if name.id in theirs else name.id
            if name.id not in bound:
                return None
    return part, new


def _walk(
    a: ast.AST,
    b: ast.AST,
    path: _Path,
    mine: frozenset[str],
    theirs: frozenset[str],
    differences: list[_Path],
    pairs: list[tuple[_Path, str, str]],
) -> bool:
    """Walk `a` and `b` together from `path`, recording where they differ (the outermost unlike nodes) and
    the locals they pair (a's with b's); False once they differ in more than DIFFERENCES places."""
    if not _alike(a, b, mine, theirs):
        differences.append(path)
        return len(differences) <= DIFFERENCES
    if isinstance(a, ast.Name) and isinstance(b, ast.Name):
        if a.id in mine:
            pairs.append((path, a.id, b.id))
        return True
    for (field, left), (_, right) in zip(ast.iter_fields(a), ast.iter_fields(b)):
        children = zip(left, right) if isinstance(left, list) else [(left, right)]
        for index, (x, y) in enumerate(children):
            if isinstance(x, ast.AST) and isinstance(y, ast.AST) and not isinstance(x, _TAGS):
                step = (field, index if isinstance(left, list) else -1)
                if not _walk(x, y, (*path, step), mine, theirs, differences, pairs):
                    return False
    return True


def _at(node: ast.AST, path: _Path) -> ast.AST:
    for field, index in path:
        node = getattr(node, field) if index < 0 else getattr(node, field)[index]
    return node


def _alike(a: ast.AST, b: ast.AST, mine: frozenset[str], theirs: frozenset[str]) -> bool:
    """Whether `a` and `b` agree in everything but their children: type, operators, constants, attributes,
    outside names, how many children each field holds (two locals are alike; they pair)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, ast.Name) and isinstance(b, ast.Name):
        return (a.id in mine and b.id in theirs) or (a.id not in mine and b.id not in theirs and a.id == b.id)
    for (_, left), (_, right) in zip(ast.iter_fields(a), ast.iter_fields(b)):
        if isinstance(left, list) and isinstance(right, list):
            if len(left) != len(right) or any(not _same(x, y) for x, y in zip(left, right)):
                return False
        elif not _same(left, right):
            return False
    return True


def _same(left: object, right: object) -> bool:
    """One field's value alike in `_alike`'s sense: children (compared when walked) alike here, operators
    of one type, anything else equal."""
    if isinstance(left, ast.expr_context):  # read or written: the same value
        return True
    if isinstance(left, _TAGS) or isinstance(right, _TAGS):
        return type(left) is type(right)
    if isinstance(left, ast.AST) or isinstance(right, ast.AST):
        return left is not None and right is not None  # a child on one side, None on the other: unlike
    return type(left) is type(right) and left == right


def _size(node: ast.AST) -> int:
    return sum(1 for inner in ast.walk(node) if isinstance(inner, ast.expr))
