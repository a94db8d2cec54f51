"""What decides whether a ranked line runs: its guards, and the lines that bound what they test.

The line fault localization ranks is often where a fault shows, not where it is: a `return` of the wrong
value runs because a condition above it sent the run there, and that condition reads a local bound a few
lines up (a filter negated, a comparison reversed). Backward slicing follows such control and data
dependences from a suspicious statement (Weiser's program slices; dynamic slices in fault localization);
here only their nearest links, from the few lines at a ranking's head:

- the guards of the line: the tests of the `if` and `while` statements it sits in, and of the `if`
  statements before it in its block (or an enclosing block of its function) whose body always leaves that
  block (it ends with `return`, `raise`, `break` or `continue`): whether the line runs is their verdict;
- the bindings of the locals a guard tests (each local's latest assignment above the guard).

Each ranks below the line it decides: a guard at SHARE of that line's score, STEP less for each guard nearer
the line, and a binding just below its guard; nearest guards first, at most GUARDS for a line. Nothing here
knows an agent: Python's syntax only. Pure: code and locations in, locations out.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Sequence
from pathlib import Path

from evolve import syntax
from evolve.meta.agentmap import agent_files
from evolve.meta.locations import Location
from evolve.meta.mutant import bindings, enclosing
from evolve.untrusted import read_text

__all__ = ["GUARDS", "HEADS", "deciding", "guards"]

HEADS = 3
"""The ranking's first lines whose guards are ranked."""
GUARDS = 3
"""Guards ranked for one line at most, the nearest first."""
SHARE = 0.5
"""A guard's score as a share of the line it decides: below the evidence that ranked that line."""
STEP = 0.02
"""How much lower each further guard scores; a guard's bindings score half of it below the guard."""

_JUMPS = (ast.Return, ast.Raise, ast.Break, ast.Continue)


def deciding(code: Path, ranked: Sequence[Location], heads: int = HEADS) -> list[Location]:
    """The guards of the first `heads` lines of `ranked` (the agent at `code`, its root) and the bindings of
    the locals they test, each below the line it decides."""
    files = set(agent_files(code))
    trees: dict[str, ast.Module | None] = {}
    found = []
    for location in ranked[:heads]:
        if location.path not in files:
            continue
        if location.path not in trees:
            trees[location.path] = syntax.parsed(read_text(code / location.path))
        tree = trees[location.path]
        if tree is None:
            continue
        for nth, test in enumerate(guards(tree, location.line)):
            score = round(max(location.score * SHARE - STEP * nth, 0.0), 4)
            said = f"decides whether line {location.line} runs, ranked {location.score:.2f}"
            found.append(Location(location.path, test.lineno, score, f"its test {said}", location.tests))
            function = enclosing(tree, test.lineno)
            if function is None:
                continue
            bound = bindings(function, tree, test.lineno)
            for name in dict.fromkeys(n.id for n in ast.walk(test) if isinstance(n, ast.Name)):
                line = bound.get(name, function.lineno)
                if line != function.lineno:  # a parameter is bound by the caller, not here
                    found.append(
                        Location(
                            location.path,
                            line,
                            round(max(score - STEP / 2, 0.0), 4),
                            f"binds {name}, which the test on line {test.lineno} reads; that test {said}",
                            location.tests,
                        )
                    )
    return found


def guards(tree: ast.Module, line: int) -> list[ast.expr]:
    """The tests that decide whether the statement at `line` runs, nearest first, at most GUARDS: those of
    the `if`/`while` statements holding it and of the leaving `if` statements before it, within its function
    (or the module, outside any)."""
    found: list[ast.expr] = []
    for test in _deciders(tree.body, line):
        if test.lineno != line and len(found) < GUARDS:
            found.append(test)
    return found


def _deciders(block: list[ast.stmt], line: int) -> Iterator[ast.expr]:
    """The tests deciding `line` in `block` and the blocks it holds: the innermost first."""
    for index, statement in enumerate(block):
        if not statement.lineno <= line <= (statement.end_lineno or statement.lineno):
            continue
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if statement.lineno != line:  # the function's own guards only: its callers decide the rest
                yield from _deciders(statement.body, line)
            return
        for inner in _blocks(statement):
            yield from _deciders(inner, line)
        if isinstance(statement, (ast.If, ast.While)) and statement.test.lineno != line:
            yield statement.test
        for before in reversed(block[:index]):
            if isinstance(before, ast.If) and before.body and isinstance(before.body[-1], _JUMPS):
                yield before.test
        return


def _blocks(statement: ast.stmt) -> list[list[ast.stmt]]:
    """The statement lists a compound statement holds (an `if`'s body and else, a `try`'s handlers...)."""
    found = []
    for name in ("body", "orelse", "finalbody"):
        inner = getattr(statement, name, None)
        if isinstance(inner, list) and inner and isinstance(inner[0], ast.stmt):
            found.append(inner)
    for handler in getattr(statement, "handlers", ()):
        found.append(handler.body)
    for case in getattr(statement, "cases", ()):
        found.append(case.body)
    return found
