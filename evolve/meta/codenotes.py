"""What a first reading of the target's code shows, computed from its syntax tree: a name it assigns and
never reads (the value computed for a call and then not passed), with the calls given an empty `""` or None
beside it, an upper bound that is 0 (a size check that lets nothing through), and a constant that is the
empty string (text that adds nothing). The computed instructions carry these notes under their deciding
lines: the 1.5B meta model places a change it is told but rarely finds one itself (check-dropped: it passed
the unused `check` to the prompt's `format`, not to the run), so the notes say what the code does, in
the parent's line numbers. Lint-like facts only; nothing here knows a planted defect.
"""

from __future__ import annotations

import ast
import textwrap

from evolve import syntax

MAX_NOTES = 3
SHOWN_CHARS = 120
"""A comparison longer than this is shown by its end (where the bound is)."""


def code_notes(source: str, first_line: int, seen: str = "") -> list[str]:
    """Notes on one function, method or constant (`source`, as it stands from `first_line` of its file); []
    for anything else or for code that does not parse. `seen`: a word of the evidence (the one that opens
    the replies the agent could not act on) to look for in the function's tests against literal words."""
    text = textwrap.dedent(source)
    try:
        tree = syntax.parse(text)
    except SyntaxError:  # agent code: also a null byte or nesting too deep (evolve.syntax)
        return []
    function = tree.body[0] if tree.body else None
    if isinstance(function, (ast.Assign, ast.AnnAssign)):
        return _empty_constant(function, first_line)
    if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return []
    offset = first_line - 1  # a node's line in the parent's file: offset + node.lineno
    unused = _unused(function, offset)
    empty = _empty_arguments(function, text, offset) if unused else []  # alone, an empty argument is no defect
    excluding = _excluding(function, text, offset, seen) if seen else []
    return (unused + empty + _zero_bounds(function, text, offset) + excluding)[:MAX_NOTES]


def _empty_constant(assign: ast.Assign | ast.AnnAssign, first_line: int) -> list[str]:
    """A constant whose value is the empty string: text added to a message that adds nothing."""
    targets = assign.targets if isinstance(assign, ast.Assign) else [assign.target]
    names = [t.id for t in targets if isinstance(t, ast.Name)]
    if not names or not (isinstance(assign.value, ast.Constant) and assign.value.value == ""):
        return []
    return [f"`{names[0]}` is an empty string (line {first_line}): wherever it is added to a text, it adds nothing."]


def _unused(function: ast.FunctionDef | ast.AsyncFunctionDef, offset: int) -> list[str]:
    """Locals assigned by a plain `name = ...` and never read in the function."""
    read = {node.id for node in ast.walk(function) if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Store)}
    notes = []
    for node in ast.walk(function):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            name = node.targets[0].id
            if name not in read and not name.startswith("_"):
                notes.append(f"`{name}` is computed on line {offset + node.lineno} and never used.")
    return notes


def _empty_arguments(function: ast.FunctionDef | ast.AsyncFunctionDef, text: str, offset: int) -> list[str]:
    """Calls in the function passed an empty value (`""` or None), where an unused local might have gone."""
    notes = []
    for node in ast.walk(function):
        if isinstance(node, ast.Call):
            empty = [a for a in [*node.args, *(k.value for k in node.keywords)]
                     if isinstance(a, ast.Constant) and a.value in ("", None)]
            if empty:
                callee = " ".join((ast.get_source_segment(text, node.func) or "a function").split())[-SHOWN_CHARS:]
                shown = ast.get_source_segment(text, empty[0]) or repr(empty[0].value)
                notes.append(f"Line {offset + node.lineno} passes an empty `{shown}` to `{callee}`.")
    return notes


def _zero_bounds(function: ast.FunctionDef | ast.AsyncFunctionDef, text: str, offset: int) -> list[str]:
    """Comparisons `X <= NAME` (or `<`) where NAME is a parameter whose default is 0."""
    arguments = function.args
    positional = [*arguments.posonlyargs, *arguments.args]
    defaults = dict(zip([a.arg for a in positional[len(positional) - len(arguments.defaults):]], arguments.defaults))
    defaults.update({a.arg: d for a, d in zip(arguments.kwonlyargs, arguments.kw_defaults) if d is not None})
    zero = {name for name, value in defaults.items()
            if isinstance(value, ast.Constant) and type(value.value) in (int, float) and value.value == 0}
    notes = []
    for node in ast.walk(function):
        if isinstance(node, ast.Compare):
            for op, right in zip(node.ops, node.comparators):
                if isinstance(op, (ast.LtE, ast.Lt)) and isinstance(right, ast.Name) and right.id in zero:
                    shown = " ".join((ast.get_source_segment(text, node) or right.id).split())  # no unparse: no recursion
                    shown = shown if len(shown) <= SHOWN_CHARS else "... " + shown[-SHOWN_CHARS:]
                    notes.append(f"`{right.id}` is 0 unless a caller passes it (line {offset + function.lineno}), so "
                                 f"`{shown}` (line {offset + node.lineno}) lets nothing of any size through: a "
                                 f"default above 0 lets something through.")
    return notes


def _excluding(function: ast.FunctionDef | ast.AsyncFunctionDef, text: str, offset: int, seen: str) -> list[str]:
    """Tests `X in (...)` against a tuple, list or set of literal strings that does not hold `seen`."""
    notes = []
    for node in ast.walk(function):
        if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], ast.In):
            words = node.comparators[0]
            if not isinstance(words, (ast.Tuple, ast.List, ast.Set)) or not words.elts or not all(
                    isinstance(e, ast.Constant) and isinstance(e.value, str) for e in words.elts):
                continue
            if seen not in {e.value for e in words.elts}:  # type: ignore[attr-defined]
                shown = " ".join((ast.get_source_segment(text, node) or "").split())[-SHOWN_CHARS:]
                notes.append(f"`{shown}` (line {offset + node.lineno}) leaves out \"{seen}\", the word that opens the "
                             f"replies the agent could not act on: with \"{seen}\" among its words, such a reply "
                             f"is an action.")
    return notes
