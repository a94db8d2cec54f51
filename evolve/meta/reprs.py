"""A sequence's repr where its items were meant: text an agent sent that holds a Python list or tuple of
strings written out (`['def f():\\n    return 1\\n']`), and the places in an agent's code that format a
list or tuple into text.

An agent that puts a list into a message with `str.format`, an f-string, `%` or `str()` sends the model the
list's repr: its items quoted and on one line, their newlines written as backslash-n. What was sent is
read from the gateway's recorded requests (`sequence_reprs`, of any agent's text); where it may have been
made, from the agent's syntax trees (`formatted_sequences`): a formatting of a local whose latest binding
above it is a list or tuple (a display, a comprehension, `list()`, `sorted()`, `str.split()`, a call of a
function annotated to return one) or a parameter annotated as one. The `join` template
(evolve.meta.omissions) joins the items there. Pure: text and trees in, strings and sites out.
"""

from __future__ import annotations

import ast
import copy
import json
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from evolve.meta.mutant import SIMPLE, enclosing

MIN_REPR = 24
"""Shorter reprs (`['a\\nb']`) are too small to have hidden a text the model needed."""
MAX_REPR = 200_000
"""A longer match is not parsed (the text is the agent's: unbounded parses are the adversary's)."""
_STRING = r"""(?:'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*")"""
_REPR = re.compile(rf"\[{_STRING}(?:, {_STRING})*\]|\({_STRING}(?:, {_STRING})+\)|\({_STRING},\)")
"""A list or tuple of string literals as `repr` writes one: `, ` between items, no space at the brackets."""
SEQUENCE_TYPES = frozenset({"list", "tuple", "List", "Tuple", "Sequence", "MutableSequence"})
SEQUENCE_CALLS = frozenset({"list", "tuple", "sorted"})
SEQUENCE_METHODS = frozenset({"split", "rsplit", "splitlines", "readlines", "findall"})


@dataclass(frozen=True)
class Formatted:
    """A place where a list or tuple is made text: `node` (a `str.format` call, an f-string, a `%` formatting
    or a `str()` call) formats `value`, a local bound to one."""

    node: ast.expr
    value: ast.Name

    @property
    def line(self) -> int:
        return self.value.lineno


def sequence_reprs(text: str) -> list[str]:
    """The reprs of lists and tuples of strings in `text` that hold a text of several lines (an item with a
    newline, written as backslash-n); a JSON array (what a tool may print on purpose) is not one."""
    found = []
    for match in _REPR.finditer(text):
        written = match.group(0)
        if not MIN_REPR <= len(written) <= MAX_REPR or "\\n" not in written:
            continue
        try:
            value = ast.literal_eval(written)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            continue
        if any("\n" in item for item in value) and not _json(written):
            found.append(written)
    return found


def formatted_sequences(tree: ast.Module, donors: Sequence[ast.Module] = ()) -> list[Formatted]:
    """Every place in `tree` that formats a local bound to a list or tuple into text, in line order; `donors`:
    the agent's other trees, whose functions' return annotations count as the file's own."""
    found = [site for node in ast.walk(tree) for site in _sites(node, tree, donors)]
    return sorted(found, key=lambda site: (site.line, site.value.col_offset))


def formatted_at(node: ast.AST, tree: ast.Module, donors: Sequence[ast.Module] = ()) -> list[Formatted]:
    """The places `node` formats a list or tuple into text: itself a `str.format` call, a `%` formatting or a
    `str()` call; for a simple statement, the f-strings in it (an edit inside an f-string is made to its
    statement)."""
    if isinstance(node, SIMPLE):
        return [
            site
            for inner in ast.walk(node)
            if isinstance(inner, ast.JoinedStr)
            for site in _sites(inner, tree, donors)
        ]
    return [] if isinstance(node, ast.JoinedStr) else _sites(node, tree, donors)


def joined(site: Formatted, separator: str, within: ast.AST | None = None) -> ast.AST:
    """`within` (default: `site.node`; else a node that holds it) with the site's value's items joined by
    `separator` (`separator.join(value)`)."""
    join = ast.Call(
        ast.Attribute(ast.Constant(separator), "join", ast.Load()), [ast.Name(site.value.id, ast.Load())], []
    )
    root = site.node if within is None else within
    if root is site.node and _str_call(root):
        return join
    new = copy.deepcopy(root)
    for old, copied in zip(ast.walk(root), ast.walk(new), strict=True):
        if old is site.value:
            _replace(new, copied, join)
            break
    return new


def _sites(node: ast.AST, tree: ast.Module, donors: Sequence[ast.Module]) -> list[Formatted]:
    if not isinstance(node, ast.expr):
        return []
    return [Formatted(node, value) for value in _formatted(node) if _sequence(value, tree, donors)]


def _json(written: str) -> bool:
    try:
        json.loads(written)
    except ValueError:
        return False
    return True


def _formatted(node: ast.AST) -> Iterator[ast.Name]:
    """The locals `node` formats into text, where it is a formatting."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "format":
        yield from (
            arg for arg in [*node.args, *(k.value for k in node.keywords)] if isinstance(arg, ast.Name)
        )
    elif isinstance(node, ast.JoinedStr):
        yield from (
            part.value
            for part in node.values
            if isinstance(part, ast.FormattedValue)
            and part.conversion in (-1, ord("s"))
            and isinstance(part.value, ast.Name)
        )
    elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod) and _text(node.left):
        operands = node.right.elts if isinstance(node.right, ast.Tuple) else [node.right]
        yield from (operand for operand in operands if isinstance(operand, ast.Name))
    elif _str_call(node) and isinstance(node, ast.Call) and isinstance(node.args[0], ast.Name):
        yield node.args[0]


def _text(node: ast.expr) -> bool:
    return (isinstance(node, ast.Constant) and isinstance(node.value, str)) or isinstance(node, ast.JoinedStr)


def _str_call(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "str"
        and len(node.args) == 1
        and not node.keywords
        and isinstance(node.args[0], ast.Name)
    )


def _sequence(value: ast.Name, tree: ast.Module, donors: Sequence[ast.Module]) -> bool:
    """Whether the latest binding of `value`'s name above it in its function is a list or tuple."""
    function = enclosing(tree, value.lineno)
    if function is None:
        return False
    latest: tuple[int, bool] | None = None
    parameters = [*function.args.posonlyargs, *function.args.args, *function.args.kwonlyargs]
    for parameter in parameters:
        if parameter.arg == value.id:
            latest = (function.lineno, _annotated(parameter.annotation))
    statements = [node for node in ast.walk(function) if isinstance(node, ast.stmt)]
    for statement in statements:
        made = _binding(statement, value.id, (tree, *donors))
        if (
            made is not None
            and statement.lineno < value.lineno
            and (latest is None or statement.lineno >= latest[0])
        ):
            latest = (statement.lineno, made)
    return latest is not None and latest[1]


def _binding(node: ast.stmt, name: str, modules: Sequence[ast.Module]) -> bool | None:
    """For a statement binding `name`: whether it binds a list or tuple (None: it binds no `name`)."""
    if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
        return _made(node.value, modules)
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.target.id == name:
        return _annotated(node.annotation) or (node.value is not None and _made(node.value, modules))
    if (
        isinstance(node, ast.AugAssign | ast.For)
        and isinstance(node.target, ast.Name)
        and node.target.id == name
    ):
        return False
    return None


def _made(expr: ast.expr, modules: Sequence[ast.Module]) -> bool:
    """Whether `expr` makes a list or tuple (a call of a function of `modules` annotated to return one)."""
    if isinstance(expr, ast.List | ast.ListComp) or (isinstance(expr, ast.Tuple) and expr.elts):
        return True
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add):
        return _made(expr.left, modules) or _made(expr.right, modules)
    if not isinstance(expr, ast.Call):
        return False
    if isinstance(expr.func, ast.Attribute):
        return expr.func.attr in SEQUENCE_METHODS
    if isinstance(expr.func, ast.Name):
        return expr.func.id in SEQUENCE_CALLS or any(
            _annotated(function.returns)
            for module in modules
            for function in ast.walk(module)
            if isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef) and function.name == expr.func.id
        )
    return False


def _annotated(annotation: ast.expr | None) -> bool:
    """Whether an annotation names a list or tuple (`list[str]`, `typing.Sequence[str]`, `"list[str]"`)."""
    if isinstance(annotation, ast.Subscript):
        annotation = annotation.value
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        return annotation.value.split("[", 1)[0].rsplit(".", 1)[-1] in SEQUENCE_TYPES
    if isinstance(annotation, ast.Attribute):
        return annotation.attr in SEQUENCE_TYPES
    return isinstance(annotation, ast.Name) and annotation.id in SEQUENCE_TYPES


def _replace(root: ast.AST, old: ast.AST, new: ast.expr) -> None:
    """`old`, a node under `root`, replaced by `new` in its parent."""
    for parent in ast.walk(root):
        for field, value in ast.iter_fields(parent):
            if value is old:
                setattr(parent, field, new)
                return
            if isinstance(value, list) and any(item is old for item in value):
                value[[id(item) for item in value].index(id(old))] = new
                return
