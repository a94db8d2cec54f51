"""Where the None an agent crashed on came from: a location source from its tracebacks, and the template that
gives a `return` without a value one.

Python says when an operation met None where a value was meant (`'NoneType' object is not iterable`, `... has
no attribute ...`; `"".join(None)` says `can only join an iterable`, a TypeError that names no type). The line
that raised (evolve.meta.crashes ranks it) is where the None was used; where it came from is often one call
away: a function of the agent whose value that line read, through a local bound from the call or the call on
the line itself, gave None: a bare `return`, `return None`, or the end of its body reached with no `return`
(the missing return value of program repair; a null's origin, not where it was dereferenced). `origins` finds
those places from the raising frame and its caller (a None handed in as an argument); `none_returns` ranks
them for the failed evaluations whose last traceback ended with such an error, at the share of failed
evaluations that did, just below the raising frame (RETURN_STEP); the screen (evolve.engine.screen) edits
them before the frames.

The `returns` template (`valued`) gives a `return` without a value a local its function bound above it, the
kind its return annotation names first (`_nearest`), and a function whose body ends without one `return v`
after its last statement.

What the agent printed is the agent's to write: a traceback only chooses where to look, never credit. Nothing
here knows an agent: the message is Python's, the rest its syntax tree. Pure: records and trees in, locations
and mutants out.
"""

from __future__ import annotations

import ast
import re
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

from evolve import syntax
from evolve.meta.agentmap import agent_files
from evolve.meta.crashes import FRAME_STEP, frames
from evolve.meta.evidence import TaskRun
from evolve.meta.locations import Line, Location
from evolve.meta.mutant import (
    SIMPLE,
    VARIABLES,
    Function,
    Mutant,
    bindings,
    callee,
    defined,
    enclosing,
    gives_none,
    header,
    header_reads,
    latest_call,
    own_nodes,
    short,
    statement_at,
    valueless,
)
from evolve.untrusted import read_text

__all__ = ["FRAMES", "NONE", "RETURN_STEP", "none_returns", "origins", "valued"]

NONE = re.compile(r"NoneType|(?:^|\s)(?:TypeError|AttributeError)\b")
"""Python's errors an operation on None raises: those naming its type (`'NoneType' object is not
subscriptable`), and any TypeError or AttributeError (`"".join(None)` says `can only join an iterable`)."""
FRAMES = 2
"""The innermost frames read: the one that raised and its caller."""
RETURN_STEP = FRAME_STEP / 2
"""An origin scores this much below the frame whose read it explains: after the raising frame, before its
callers."""


def none_returns(code: Path, runs: Sequence[TaskRun]) -> list[Location]:
    """The places of the agent's functions (`code`: its root) that gave the None its failed evaluations
    crashed on, scored by the share of failed evaluations whose last traceback reached one that way, each
    frame's origins FRAME_STEP below the frame before it; [] where none crashed on None."""
    failed = [run for run in runs if run.outcome != "pass"]
    files = agent_files(code)
    trees = {path: tree for path in files if (tree := syntax.parsed(read_text(code / path))) is not None}
    held: Counter[Line] = Counter()
    depth: dict[Line, int] = {}
    said: dict[Line, str] = {}
    for run in failed:
        stack = frames(run.agent_output, files)
        if stack is None or not NONE.search(stack[1]):
            continue
        here = set()
        for line, why, frame in _found(trees, stack[0]):
            if line not in depth or frame < depth[line]:
                depth[line] = frame
            said.setdefault(line, f"{why} ({stack[1]})")
            here.add(line)
        held.update(here)
    ranked = [
        Location(
            line[0],
            line[1],
            round(max(count / len(failed) - RETURN_STEP - FRAME_STEP * depth[line], 0.0), 4),
            f"{count} of {len(failed)} failed evaluations crashed on a value that may be None from here: "
            f"{said[line]}",
        )
        for line, count in held.items()
    ]
    return sorted(ranked, key=lambda location: (-location.score, location.path, location.line))


def origins(trees: Mapping[str, ast.Module], stack: Sequence[Line]) -> list[tuple[Line, str]]:
    """Where a None the innermost frames of `stack` (the agent's lines of a traceback, outermost first) read
    may have come from: the places of the agent's functions (`trees`, by path) that give None, whose value
    the raising frame's statement, then its caller's, reads (a call on the line, or a local its function
    bound from one), each with the reading said; nearest frame first, no place twice."""
    return [(line, why) for line, why, _ in _found(trees, stack)]


def _found(trees: Mapping[str, ast.Module], stack: Sequence[Line]) -> list[tuple[Line, str, int]]:
    found: dict[Line, tuple[str, int]] = {}
    for frame, (path, number) in enumerate(reversed(stack[-FRAMES:])):
        tree = trees.get(path)
        if tree is None:
            continue
        for read, call in _calls_read(tree, number):
            for where, function in _definitions(trees, callee(call)):
                for line in gives_none(function):
                    why = f"{path}:{number} reads {read}, and `{function.name}` gives None here"
                    found.setdefault((where, line), (why, frame))
    return [(line, why, frame) for line, (why, frame) in found.items()]


def _calls_read(tree: ast.Module, line: int) -> Iterator[tuple[str, ast.Call]]:
    """The calls whose value the statement at `line` reads: its own (not one it makes for what it does, its
    value dropped), and for each local it reads, the call the latest plain assignment above it in its
    function bound that local to; each with how it is read."""
    statement = statement_at(tree, line)
    if statement is None:
        return
    parts = header(statement)
    dropped = statement.value if isinstance(statement, ast.Expr) else None  # a call made for what it does
    for node in (n for part in parts for n in ast.walk(part)):
        if isinstance(node, ast.Call) and node is not dropped:
            yield f"`{short(ast.unparse(node.func))}(...)`", node
    function = enclosing(tree, line)
    if function is None:
        return
    for name in sorted(header_reads(statement)):
        call = latest_call(function, name, statement.lineno)
        if call is not None:
            yield f"`{name}`, bound from `{short(ast.unparse(call.func))}(...)`", call


def _definitions(trees: Mapping[str, ast.Module], name: str) -> Iterator[tuple[str, Function]]:
    """The agent's functions and methods named `name` (`mutant.defined`), each with its file."""
    for path, tree in trees.items():
        for function in defined([tree], name):
            yield path, function


def valued(node: ast.AST, tree: ast.Module, donors: list[ast.Module]) -> Iterator[Mutant]:
    """The `returns` template: a `return` without a value (or of None) given each local its function bound
    above it, nearest binding first, VARIABLES at most; and `return v` inserted after a function's last
    simple statement where its body runs past it while it returns a value elsewhere (`gives_none`), for the
    locals bound there."""
    if not isinstance(node, SIMPLE) or isinstance(node, ast.Raise):
        return
    function = enclosing(tree, node.lineno)
    if function is None or any(isinstance(n, ast.Yield | ast.YieldFrom) for n in own_nodes(function)):
        return
    if isinstance(node, ast.Return):
        if not valueless(node):
            return
        for name in _nearest(function, tree, node.lineno):
            yield Mutant(node, "returns", ast.Return(ast.Name(name, ast.Load())), f"return -> return {name}")
    elif function.body[-1] is node and node.lineno in gives_none(function):
        for name in _nearest(function, tree, (node.end_lineno or node.lineno) + 1):
            statement = ast.Return(ast.Name(name, ast.Load()))
            yield Mutant(node, "returns", None, f"inserted: return {name}", statement)


def _nearest(function: Function, tree: ast.Module, line: int) -> list[str]:
    """The locals a value-less return at `line` may have been meant to give, VARIABLES at most: those whose
    kind (`_kind`) is the kind the function's return annotation names first, then those of no kind read, each
    group nearest binding first; none of another kind than the annotation's (a type-compatible ingredient, as
    CapGen and ssFix choose them)."""
    above = bindings(function, tree, line)
    wanted = _kind_named(function.returns)
    kinds = _local_kinds(function, line)
    fitting = [name for name in above if wanted is None or kinds.get(name) in (wanted, None)]
    return sorted(fitting, key=lambda name: (kinds.get(name) != wanted, -above[name], name))[:VARIABLES]


KINDS = {
    **{name: "list" for name in ("list", "List", "sorted")},
    **{name: "dict" for name in ("dict", "Dict")},
    **{name: "set" for name in ("set", "Set", "frozenset")},
    **{name: "tuple" for name in ("tuple", "Tuple")},
    **{name: name for name in ("str", "int", "float", "bool")},
}
"""The builtin kinds a value is read as: by an annotation's name, or the builtin call that made it."""


def _kind_named(annotation: ast.expr | None) -> str | None:
    """The kind an annotation names (`list[str]`, `List[str]`, `dict`, `str | None`: its first part that is
    not None), or None where it names none of KINDS."""
    if annotation is None:
        return None
    if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
        parts = [annotation.left, annotation.right]
        named = [kind for part in parts if not _none(part) and (kind := _kind_named(part)) is not None]
        return named[0] if len(named) == 1 else None
    if isinstance(annotation, ast.Subscript):
        annotation = annotation.value
    return KINDS.get(annotation.id) if isinstance(annotation, ast.Name) else None


def _none(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def _kind_of(value: ast.expr) -> str | None:
    """The kind of value an expression makes, where its form says (a literal, a display, a comprehension,
    an f-string, a comparison, a builtin's call); None where it does not."""
    if isinstance(value, ast.List | ast.ListComp):
        return "list"
    if isinstance(value, ast.Dict | ast.DictComp):
        return "dict"
    if isinstance(value, ast.Set | ast.SetComp):
        return "set"
    if isinstance(value, ast.Tuple):
        return "tuple"
    if isinstance(value, ast.JoinedStr) or (isinstance(value, ast.Constant) and isinstance(value.value, str)):
        return "str"
    if isinstance(value, ast.Compare | ast.BoolOp) or (
        isinstance(value, ast.UnaryOp) and isinstance(value.op, ast.Not)
    ):
        return "bool"
    if isinstance(value, ast.Constant) and type(value.value) in (bool, int, float):
        return type(value.value).__name__
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name):
        return KINDS.get(value.func.id)
    return None


def _local_kinds(function: Function, line: int) -> dict[str, str | None]:
    """Each local's kind at its latest binding above `line` (a parameter's by its annotation), None where
    that binding does not say."""
    found: dict[str, tuple[int, str | None]] = {}
    for argument in [*function.args.posonlyargs, *function.args.args, *function.args.kwonlyargs]:
        found[argument.arg] = (function.lineno, _kind_named(argument.annotation))
    for node in own_nodes(function):
        if not isinstance(node, ast.stmt) or node.lineno >= line:
            continue
        targets: list[tuple[ast.expr, str | None]] = []
        if isinstance(node, ast.Assign):
            targets = [(target, _kind_of(node.value)) for target in node.targets]
        elif isinstance(node, ast.AnnAssign):
            targets = [(node.target, _kind_named(node.annotation))]
        elif isinstance(node, ast.For | ast.With):
            loose = [node.target] if isinstance(node, ast.For) else [i.optional_vars for i in node.items]
            targets = [(target, None) for target in loose if target is not None]
        for target, kind in targets:
            for name in (n for n in ast.walk(target) if isinstance(n, ast.Name)):
                if name.id not in found or found[name.id][0] <= node.lineno:
                    found[name.id] = (node.lineno, kind if isinstance(target, ast.Name) else None)
    return {name: kind for name, (_, kind) in found.items()}
