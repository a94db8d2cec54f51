"""Values an agent's code computes and then drops: a static source of suspicious lines.

A local name that an assignment binds and that nothing in its function ever reads is a value computed for
nothing (pyflakes' "assigned to but never used", a compiler's unused-but-set warning). In code that
otherwise reads what it computes, such a store is where a use was changed or left out: the statement that
should read the value usually follows it, or the store's own name is the wrong one. Where a failing run ran
the store, both lines are ranked (`dead_store_locations`), with the name as evidence, so a repair is asked
about the statement that may have lost the value and about the store itself.

What counts, to stay precise in code written by people and models alike: a plain name (not `_`-prefixed)
that is the whole target of an assignment with a value, in a function that reads no names dynamically
(`locals`, `vars`, `eval`, `exec`) and declares it neither `global` nor `nonlocal`; any read of the name
anywhere in the function, nested functions and comprehensions included, or a `del`, is a use. Tuple targets,
loop variables, `with ... as`, augmented assignments and parameters are not counted (unpacking and
interfaces leave names unread on purpose).

Nothing here knows an agent: it reads Python's syntax tree of whatever files the agent has. Pure: text in,
data out.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator
from collections.abc import Set as AbstractSet
from dataclasses import dataclass

from evolve import syntax
from evolve.meta.locations import Line, Location

DYNAMIC = frozenset({"locals", "vars", "eval", "exec"})
"""Calls that read a function's names without naming them: a function that makes one is not judged."""
STORE_SCORE = 1.0
"""The statement after a dead store that a failing run ran: as suspicious as a line only failing runs ran."""
BINDING_SCORE = 0.9
"""The dead store itself (its name may be the wrong one): just below the statement after it."""


@dataclass(frozen=True)
class DeadStore:
    """A value bound to `name` at `line` of `path` (in `function`) that its function never reads."""

    path: str
    name: str
    line: int
    function: str
    after: int | None
    """The first line of the next statement of the function after the store (None: the store is last)."""


def dead_stores(path: str, source: str) -> list[DeadStore]:
    """The dead stores of one file (`path`: as the locations name it), in line order; none when it does not
    parse."""
    tree = syntax.parsed(source)
    if tree is None:
        return []
    found = [
        store
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        for store in function_dead_stores(path, node)
    ]
    return sorted(found, key=lambda store: (store.line, store.name))


def function_dead_stores(path: str, function: ast.FunctionDef | ast.AsyncFunctionDef) -> Iterator[DeadStore]:
    """The dead stores of one function's own scope (`path`: its file, as the locations name it), in the
    order its nodes are met."""
    read: set[str] = set()
    declared: set[str] = set()
    for node in (node for statement in function.body for node in ast.walk(statement)):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Store):
            read.add(node.id)  # a load or a del, here or in a nested function (a closure reads it)
        elif isinstance(node, ast.Global | ast.Nonlocal):
            declared.update(node.names)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in DYNAMIC:
            return
    own = _own_scope(function)
    statements = sorted({node.lineno for node in own if isinstance(node, ast.stmt)})
    for node in own:
        target = _single_target(node)
        if target is None or target in read or target in declared or target.startswith("_"):
            continue
        assert isinstance(node, ast.stmt)  # an assignment
        end = node.end_lineno or node.lineno
        after = next((line for line in statements if line > end), None)
        yield DeadStore(path, target, node.lineno, function.name, after)


def _own_scope(function: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.AST]:
    """The nodes of `function`'s body in its own scope: a nested function, class or lambda is there, its
    body is not (its stores are judged as its own)."""
    found: list[ast.AST] = []
    stack: list[ast.AST] = list(function.body)
    while stack:
        node = stack.pop()
        found.append(node)
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda):
            stack.extend(ast.iter_child_nodes(node))
    return found


def _single_target(node: ast.AST) -> str | None:
    """The name an assignment with a value binds as its whole target (every target, for `a = b = ...`)."""
    if isinstance(node, ast.Assign) and all(isinstance(t, ast.Name) for t in node.targets):
        names = {t.id for t in node.targets if isinstance(t, ast.Name)}
        return names.pop() if len(names) == 1 else None
    if isinstance(node, ast.AnnAssign) and node.value is not None and isinstance(node.target, ast.Name):
        return node.target.id
    return None


def dead_store_locations(stores: Iterable[DeadStore], ran: AbstractSet[Line]) -> list[Location]:
    """For each dead store a failing run ran (`ran`: the lines it ran), the statement after it (where that
    ran too) and the store itself, with the name as evidence."""
    found: list[Location] = []
    for store in stores:
        if (store.path, store.line) not in ran:
            continue
        said = f"`{store.name}` is bound at line {store.line} (in `{store.function}`) and never read"
        if store.after is not None and (store.path, store.after) in ran:
            found.append(
                Location(
                    store.path,
                    store.after,
                    STORE_SCORE,
                    f"{said}: the value is computed and dropped, and this is the statement after it",
                )
            )
        found.append(
            Location(
                store.path,
                store.line,
                BINDING_SCORE,
                f"{said}: the value is computed and dropped (or bound to the wrong name)",
            )
        )
    return found
