"""The module-level values a ranked line reads, where they are defined.

A module's constants, compiled patterns and tables are bound when it is imported: every run and every own
test runs those lines alike (and a probe that starts after the import never sees them), so spectra cannot
tell them apart, and a fault in one (a pattern's group, a limit, a table's entry) shows only at the lines
that read it. `with_definitions` puts, right after each ranked line, the module-level assignments of the names
that line's statement reads and its function does not bind (data dependence on a global: the nearest link of a
backward slice that spectra cannot see), at that line's score, with the reading as evidence.

Nothing here knows an agent: Python's syntax only. Pure: code and locations in, locations out.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from pathlib import Path

from evolve import syntax
from evolve.meta.agentmap import agent_files
from evolve.meta.locations import Line, Location
from evolve.meta.mutant import bindings, enclosing, header_reads, statement_at
from evolve.untrusted import read_text

__all__ = ["module_values", "with_definitions"]


def module_values(tree: ast.Module, line: int) -> list[tuple[str, int]]:
    """The names the statement at `line` reads (a block's header only) that its function does not bind and
    a module-level assignment of `tree` binds, each with that assignment's line (the last one, where there
    are several), in the order of those lines."""
    statement, function = statement_at(tree, line), enclosing(tree, line)
    if statement is None or function is None:
        return []
    local = set(bindings(function, tree, (function.end_lineno or line) + 1))
    read = header_reads(statement)
    bound: dict[str, int] = {}
    for top in tree.body:
        targets = (
            top.targets
            if isinstance(top, ast.Assign)
            else [top.target]
            if isinstance(top, ast.AnnAssign)
            else []
        )
        for target in targets:
            if isinstance(target, ast.Name) and target.id in read - local:
                bound[target.id] = top.lineno
    return sorted(bound.items(), key=lambda item: item[1])


def with_definitions(code: Path, ranked: Sequence[Location]) -> list[Location]:
    """`ranked` with, right after each line, the module-level assignments of the values it reads
    (`module_values`, in the agent at `code`, its root) not ranked before it, at its score."""
    files = set(agent_files(code))
    trees: dict[str, ast.Module | None] = {}
    placed: set[Line] = {(location.path, location.line) for location in ranked}
    found: list[Location] = []
    for location in ranked:
        found.append(location)
        if location.path not in files:
            continue
        if location.path not in trees:
            trees[location.path] = syntax.parsed(read_text(code / location.path))
        tree = trees[location.path]
        for name, line in module_values(tree, location.line) if tree is not None else []:
            if (location.path, line) not in placed:
                placed.add((location.path, line))
                said = f"binds `{name}` at import, which line {location.line} reads ({location.evidence})"
                found.append(Location(location.path, line, location.score, said, location.tests))
    return found
