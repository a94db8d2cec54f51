"""Template candidates: the fix patterns of template-based program repair, applied at a ranked line.

A small model transcribes a change it is told but rarely designs one; template-based repair (TBar, PraPR;
GenProg's statement insertion for omissions) needs no model to design it: a handful of generic edits
(evolve.meta.mutations, each template's mutants of a node), tried at the lines fault localization ranked,
each validated like any other candidate (evolve.engine.generate). `unused`, `uncalled` and `field`, backed by
the code's own evidence (a value computed and dropped, a helper nothing calls, a field only ever set to a
constant), come first at their distance; the others take turns after them.

Edits replace the node's own source text (the rest of the file, comments included, stays as it was) and
are kept only when the result parses to the intended tree. Nearest to the ranked line first; within one
distance the templates take turns, in an order drawn from the caller's seeded generator. Pure: source in,
sources out.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from evolve import syntax
from evolve.meta.agentmap import is_test
from evolve.meta.locations import Line, Location
from evolve.meta.mutant import SIMPLE, Mutant, enclosing
from evolve.meta.mutations import TEMPLATES, mutants
from evolve.meta.observed import observed

__all__ = ["TEMPLATES", "Generated", "TemplateEdit", "agent_sources", "at_locations", "edits_at"]

WINDOW = 2
"""Lines either side of the ranked line whose nodes are edited too: a ranking's line is often the statement's
first, the fault one line further (a multi-line call, a condition above)."""

_MAX_SOURCE = 200_000
"""A file larger than this gets no templates (agent code the host reads is the adversary's)."""
DEEPEST = 100
"""A file whose syntax tree nests deeper gets none either: the templates walk the tree for each node near the
line, so a generated chain of 900 `+` on one line costs minutes, and whether unparsing it fails first
depends on the process's recursion limit (a library may raise it)."""


@dataclass(frozen=True)
class TemplateEdit:
    """One template applied at one node: the whole file's new text."""

    template: str
    line: int
    """Where the edited node starts."""
    change: str
    """What changed, in a line (`64 -> 640`)."""
    source: str


@dataclass(frozen=True)
class Generated:
    """A template candidate of an agent: its file, the ranked location it was made for, the edit."""

    location: Location
    path: str
    edit: TemplateEdit
    screened: bool = False
    """It passed every own test of the agent before it became a candidate (evolve.engine.screen)."""


def edits_at(
    source: str,
    line: int,
    limit: int,
    rng: np.random.Generator,
    elsewhere: Sequence[str] = (),
    *,
    near: bool = True,
    seen: Mapping[str, object] | None = None,
) -> list[TemplateEdit]:
    """Up to `limit` template edits of `source` at `line` (1-based), nearest first; `elsewhere`: the agent's
    other sources, where the omission templates find what a call passes or a statement does. `near`: the
    lines within WINDOW and the conditions above it too; without it the line's own nodes alone (the screen,
    where each line the failing tests ran is ranked in its own right). `seen`: the literal values a failing
    run read at the line, by expression (evolve.meta.observed: the `observed` template, on its own nodes)."""
    if limit <= 0 or len(source) > _MAX_SOURCE:
        return []
    try:
        tree = syntax.parse(source)
        ast.unparse(tree)  # every edit is checked against the whole file's unparsed tree
    except (SyntaxError, RecursionError):  # code nested deeper than unparsing reaches (the agent's doing)
        return []
    if _depth(tree) > DEEPEST:
        return []
    lines = source.splitlines(keepends=True)
    donors = [tree, *(_parsed(text) for text in elsewhere)]
    found = [(distance, node) for distance, node in _near(tree, line) if near or distance == 0]
    nearby = [(distance, m) for distance, node in found for m in mutants(node, tree, donors)]
    nearby += [(0, m) for distance, node in found if distance == 0 for m in observed(node, seen or {})]
    edits: list[TemplateEdit] = []
    texts = {source}
    for mutant in _ordered(nearby, rng):
        text = _apply(source, lines, mutant)
        if text is None or text in texts:
            continue
        texts.add(text)
        edits.append(TemplateEdit(mutant.template, getattr(mutant.node, "lineno", line), mutant.change, text))
        if len(edits) == limit:
            break
    return edits


def at_locations(
    code: Path,
    locations: Sequence[Location],
    per_location: int,
    rng: np.random.Generator,
    *,
    near: bool = True,
    seen: Mapping[Line, Mapping[str, object]] | None = None,
) -> list[Generated]:
    """Up to `per_location` template edits at each location (in ranking order) of the agent at `code`; a
    location whose file is not one of the agent's Python files gets none, and an edit already made for an
    earlier location is not made again. `near`: as for `edits_at`; `seen`: what a failing run read at each
    line, as `edits_at` takes it."""
    sources = agent_sources(code)
    made: list[Generated] = []
    done: set[tuple[str, str]] = set()
    for location in locations:
        source = sources.get(location.path)
        if source is None:
            continue
        others = [text for path, text in sources.items() if path != location.path]
        at = (location.path, location.line)
        values = (seen or {}).get(at)
        for edit in edits_at(source, location.line, per_location, rng, others, near=near, seen=values):
            if (location.path, edit.source) not in done:
                done.add((location.path, edit.source))
                made.append(Generated(location, location.path, edit))
    return made


def agent_sources(code: Path) -> dict[str, str]:
    """The agent's Python files (not its tests), by path relative to its root."""
    found = {}
    for path in sorted(code.rglob("*.py")):
        relative = path.relative_to(code)
        if (
            path.is_symlink()
            or not path.is_file()
            or is_test(relative.parts)
            or "__pycache__" in relative.parts
        ):
            continue
        try:
            found[relative.as_posix()] = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue  # not text the templates can edit; the other files still get theirs
    return found


def _parsed(source: str) -> ast.Module:
    """A donor file's tree; an empty one for a file over `_MAX_SOURCE` or one that does not parse."""
    tree = syntax.parsed(source) if len(source) <= _MAX_SOURCE else None
    return tree or ast.Module([], [])


def _ordered(near: list[tuple[int, Mutant]], rng: np.random.Generator) -> list[Mutant]:
    """Nearest first; at one distance each template's first mutant, then each one's second, ..., the
    templates in an order drawn from `rng` (another expansion at the same line tries others first)."""
    turn = {TEMPLATES[int(index)]: rank for rank, index in enumerate(rng.permutation(len(TEMPLATES)))}
    # from the code's own evidence (a value computed and dropped, a helper nothing calls, a field only ever
    # set to a constant, a list formatted into text, a pipe hiding a command's status, a twin written
    # otherwise elsewhere, a keyword a format string drops, code cut off, a value converted for a sibling
    # call, a call whose new value a statement drops, a return that gives None), not blind mutations, or a
    # value a failing run read there
    turn["unused"] = turn["uncalled"] = turn["field"] = turn["join"] = turn["pipe"] = turn["similar"] = -1
    turn["observed"] = turn["adapt"] = turn["placeholder"] = turn["reach"] = turn["wrap"] = -1
    turn["keep"] = turn["returns"] = -1
    counted: dict[tuple[int, str], int] = {}
    keys = []
    for index, (distance, mutant) in enumerate(near):
        earlier = counted.get((distance, mutant.template), 0)
        counted[(distance, mutant.template)] = earlier + 1
        keys.append((distance, earlier, turn[mutant.template], index))
    return [near[key[3]][1] for key in sorted(keys)]


def _depth(tree: ast.AST) -> int:
    """How deep `tree` nests (a module alone: 1), counted without recursion."""
    deepest, stack = 0, [(tree, 1)]
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))
    return deepest


def _near(tree: ast.Module, line: int) -> Iterator[tuple[int, ast.AST]]:
    """Nodes starting within WINDOW lines of `line`, with their distance from it (an f-string's text and its
    replacement fields not, the expressions in them yes); then the nodes of the conditions on the way to it
    (`_guards`), at their condition's distance."""
    skipped: set[int] = set()
    yielded: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):  # its parts carry the whole f-string's position: no place to edit
            specs = [part.format_spec for part in node.values if isinstance(part, ast.FormattedValue)]
            skipped.update(id(part) for part in [*node.values, *specs])
        if id(node) in skipped or not hasattr(node, "lineno"):
            continue
        start, end = node.lineno, getattr(node, "end_lineno", None) or node.lineno
        distance = (
            0
            if start <= line <= end and not hasattr(node, "body")
            else min(abs(start - line), abs(end - line))
        )
        if distance <= WINDOW and (isinstance(node, (ast.expr, *SIMPLE))):
            yielded.add(id(node))
            yield distance, node
    for guard in _guards(tree, line):
        for node in ast.walk(guard):
            if isinstance(node, ast.expr) and id(node) not in yielded and id(node) not in skipped:
                yielded.add(id(node))
                yield line - guard.lineno, node


def _guards(tree: ast.Module, line: int) -> list[ast.expr]:
    """The conditions that may decide whether `line` runs, beyond WINDOW: the tests of the `if` and `while`
    statements of its function that start above it, nearest first. A line fault localization ranks is often
    the branch a wrong condition sends the failing runs to, the condition itself lines above."""
    function = enclosing(tree, line)
    if function is None:
        return []
    tests = [
        node.test
        for node in ast.walk(function)
        if isinstance(node, (ast.If, ast.While)) and node.test.lineno < line - WINDOW
    ]
    return sorted(tests, key=lambda test: -test.lineno)


def _apply(source: str, lines: list[str], mutant: Mutant) -> str | None:
    """The new source with the mutant's node text replaced (or its statement inserted after the node),
    or None when it does not parse to the intended tree."""
    node = mutant.node
    if not isinstance(node, (ast.expr, ast.stmt)):
        return None
    try:
        start, end = (
            _offset(lines, node.lineno, node.col_offset),
            _offset(lines, node.end_lineno, node.end_col_offset),
        )
        if mutant.inserted is not None:
            first = lines[node.lineno - 1]
            indent = first[: len(first) - len(first.lstrip())]
            statement = ast.unparse(mutant.inserted)
            if mutant.before:  # at the start of the node's first line, which it must begin
                line_start = _offset(lines, node.lineno, 0)
                if source[line_start:start].strip():
                    return None
                text = source[:line_start] + indent + statement + "\n" + source[line_start:]
            else:
                text = source[:end] + "\n" + indent + statement + source[end:]
            expected = _inserted(source, node, mutant.inserted, before=mutant.before)
            return text if _parses_to(text, expected) else None
        assert mutant.new is not None
        replacement = ast.unparse(mutant.new)
        if isinstance(node, ast.stmt) and hasattr(mutant.new, "body"):  # a block's inner lines at its indent
            first = lines[node.lineno - 1]
            replacement = replacement.replace("\n", "\n" + first[: len(first) - len(first.lstrip())])
        expected = _replaced(source, node, mutant.new)
        for spliced in (replacement, f"({replacement})"):  # bare where precedence allows, else parenthesized
            text = source[:start] + spliced + source[end:]
            if _parses_to(text, expected):
                return text
    except (SyntaxError, RecursionError, ValueError, IndexError, TypeError, AttributeError):
        return None  # the edit is not made; the other templates still are
    return None


def _parses_to(text: str, expected: str) -> bool:
    try:
        return ast.unparse(syntax.parse(text)) == expected
    except SyntaxError:
        return False


def _offset(lines: list[str], lineno: int | None, col: int | None) -> int:
    """The character offset of an AST position (its column counts UTF-8 bytes)."""
    if lineno is None or col is None:
        raise ValueError("a node without a position")
    before = sum(len(text) for text in lines[: lineno - 1])
    return before + len(lines[lineno - 1].encode("utf-8")[:col].decode("utf-8", errors="replace"))


class _Swap(ast.NodeTransformer):
    def __init__(
        self, key: tuple, new: ast.AST | None, inserted: ast.stmt | None = None, before: bool = False
    ) -> None:
        self.key, self.new, self.inserted, self.before = key, new, inserted, before

    def visit(self, node: ast.AST) -> ast.AST | list[ast.AST]:
        if _key(node) == self.key:
            if self.inserted is not None:
                return [self.inserted, node] if self.before else [node, self.inserted]
            assert self.new is not None
            return self.new
        return self.generic_visit(node)


def _key(node: ast.AST) -> tuple:
    return (
        type(node),
        getattr(node, "lineno", None),
        getattr(node, "col_offset", None),
        getattr(node, "end_lineno", None),
        getattr(node, "end_col_offset", None),
    )


def _replaced(source: str, node: ast.AST, new: ast.AST) -> str:
    """The unparsed tree of `source` with `node` (by its position) replaced by `new`; a fresh parse, not a
    copy of the tree (parsing is C, a deep copy of a file's tree is not)."""
    swapped = _Swap(_key(node), new).visit(syntax.parse(source))
    assert isinstance(swapped, ast.Module)
    return ast.unparse(swapped)


def _inserted(source: str, node: ast.AST, statement: ast.stmt, *, before: bool = False) -> str:
    swapped = _Swap(_key(node), None, statement, before).visit(syntax.parse(source))
    assert isinstance(swapped, ast.Module)
    return ast.unparse(swapped)
