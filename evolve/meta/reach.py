"""Statements no run can reach: a static source of suspicious lines, and the template that guards the
statement that cut them off.

A statement after a `return`, `raise`, `continue` or `break` of the same block never runs (pylint's
unreachable, a compiler's dead-code warning). In code that otherwise means what it writes, the statement
that ends the block early is where a condition was lost: `if tests: return X` made `return X`, and every
case below it is skipped in every run. The lines cut off never run, so spectra cannot rank them, and the
statement that cuts them off runs in passing runs as in failing ones. Where a failing run ran it, it is
ranked (`unreachable_locations`), with the lines it cuts off as evidence, and the `reach` template
(`reaches`) puts it under a condition its function tests elsewhere: each operand of an `and`/`or` of a
nearby `if` or `while` test, then the whole test, nearest first.

What counts: a block of a function (not of a module or class: their statements run at import) whose
statements after the one that ends it are not only the idle kind a function keeps on purpose (`pass`,
`...`, a `yield` of a literal that makes a function that only raises a generator). Nothing here knows an
agent: it reads Python's syntax tree of whatever files the agent has. Pure: trees in, data and mutants out.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator
from collections.abc import Set as AbstractSet
from dataclasses import dataclass

from evolve.meta.locations import Line, Location, ran_at
from evolve.meta.mutant import Mutant, bindings, enclosing, short

ENDS = (ast.Return, ast.Raise, ast.Continue, ast.Break)
"""Statements after which nothing of their block runs."""
UNREACHABLE_SCORE = 0.9
"""A statement a failing run ran that cuts off the statements after it: as suspicious as a dead store."""
CONDITIONS = 4
"""The conditions the `reach` template tries around one statement, nearest first."""


@dataclass(frozen=True)
class Unreachable:
    """The statement at `line` of `path` (in `function`) ends its block before lines `first`..`last`."""

    path: str
    line: int
    first: int
    last: int
    function: str


def unreachable(path: str, tree: ast.Module) -> list[Unreachable]:
    """The statements of one module's functions that cut off statements after them (`path`: its file, as the
    locations name it), in line order."""
    found = []
    for function in ast.walk(tree):
        if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for ending, rest in _cut_off(function):
            last = rest[-1].end_lineno or rest[-1].lineno
            found.append(Unreachable(path, ending.lineno, rest[0].lineno, last, function.name))
    return sorted(set(found), key=lambda item: (item.line, item.first))


def unreachable_locations(found: Iterable[Unreachable], ran: AbstractSet[Line]) -> list[Location]:
    """Each statement a failing run ran (`ran`: the lines it ran) that cuts off others, at UNREACHABLE_SCORE,
    with the lines it cuts off as evidence."""
    return ran_at(
        found,
        ran,
        UNREACHABLE_SCORE,
        lambda item: (
            f"this statement ends its block, so lines {item.first}-{item.last} after it "
            f"(in `{item.function}`) never run: a condition around it may be lost"
        ),
    )


def reaches(node: ast.AST, tree: ast.Module, donors: list[ast.Module]) -> Iterator[Mutant]:
    """The `reach` template at a statement that cuts off others: `if c:` around it, for the first CONDITIONS
    conditions `c` of its function's `if` and `while` tests (each operand of an `and`/`or`, then the whole
    test), nearest first, that read only names bound there."""
    if not isinstance(node, ENDS):
        return
    function = enclosing(tree, node.lineno)
    if function is None or not any(ending is node for ending, _ in _cut_off(function)):
        return
    parameters = {a.arg for a in ast.walk(function.args) if isinstance(a, ast.arg)}
    bound = set(bindings(function, tree, node.lineno)) | parameters
    local = parameters | {
        n.id for n in ast.walk(function) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
    }
    tests = sorted(
        (branch for branch in ast.walk(function) if isinstance(branch, ast.If | ast.While)),
        key=lambda branch: (abs(branch.lineno - node.lineno), branch.lineno),
    )
    offered: dict[str, ast.expr] = {}
    for branch in tests:
        if any(inner is node for inner in ast.walk(branch)):
            continue  # a test the statement already stands under (or is excluded by)
        test = branch.test
        parts = [*test.values, test] if isinstance(test, ast.BoolOp) else [test]
        for part in parts:
            read = {n.id for n in ast.walk(part) if isinstance(n, ast.Name)}
            if all(name in bound or name not in local for name in read):
                offered.setdefault(ast.unparse(part), part)
    for text, part in list(offered.items())[:CONDITIONS]:
        change = f"guarded: if {short(text)}: {short(ast.unparse(node))}"
        yield Mutant(node, "reach", ast.If(part, [node], []), change)


def _cut_off(function: ast.FunctionDef | ast.AsyncFunctionDef) -> Iterator[tuple[ast.stmt, list[ast.stmt]]]:
    """Each statement of `function`'s own blocks (nested functions and classes judged as their own) that
    ends its block before other statements, with those statements."""
    stack: list[ast.AST] = [function]
    while stack:
        node = stack.pop()
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            if not isinstance(block, list):
                continue
            for index, statement in enumerate(block[:-1]):
                if isinstance(statement, ENDS):
                    rest = block[index + 1 :]
                    if not all(_idle(s) for s in rest):
                        yield statement, rest
                    break
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda):
                stack.append(child)


def _idle(statement: ast.stmt) -> bool:
    """A statement kept after a function's end on purpose: `pass`, `...`, a `yield` of nothing or of a
    literal (what makes a function that only raises a generator)."""
    if isinstance(statement, ast.Pass):
        return True
    if isinstance(statement, ast.Expr):
        value = statement.value
        return (isinstance(value, ast.Constant) and value.value is Ellipsis) or (
            isinstance(value, ast.Yield | ast.YieldFrom)
            and (value.value is None or isinstance(value.value, ast.Constant | ast.Tuple | ast.List))
        )
    return False
