"""What a line of the agent's code read as it was about to run, as a debugger would show it: the part of the
probes (evolve.engine.test_probe, evolve.engine.coverage_probe) that both run in the agent's sandbox.

The engine runs a probe as `python3 -c TEXT ...`, where TEXT is this file's text and then the probe's
(`evolve.engine.spectra.bootstrap`), so it needs only the standard library of the sandbox's Python (3.11 in
the base image) and no `from __future__` import (which must open a file). From a line's text it takes the
names, attributes and constant subscripts it reads (the outermost first), and reads their values from the
frame without running the agent's code: no call, no property or other descriptor, a subscript only of a
built-in container; a value that is a function, class or module is left out. Each value is shown by
`reprlib`, cut, so a large one costs what a small one does.
"""

import ast
import inspect
import linecache
import re
import reprlib
import types
from types import FrameType
from typing import Any

LINE_VALUES = 4
"""The expressions of one line whose values are shown (the outermost first)."""
VALUE_CHARS = 80
"""A value's repr is cut at this (each container at 6 items, 2 levels deep)."""
CONTAINERS = (str, bytes, list, tuple, dict, re.Match)
"""What a subscript is read from: types whose `[...]` runs none of the agent's code."""
NO_VALUE = (types.ModuleType, type, types.FunctionType, types.BuiltinFunctionType, types.MethodType)
"""What a name can hold that is not data: left out of a line's values."""
OPENING = ("if ", "elif ", "while ", "return ", "assert ", "yield ")
"""The keywords a line's expression follows."""


class LineValues:
    """The values each line read, as `[[expression, repr], ...]`; a line's expressions parsed once."""

    def __init__(self) -> None:
        self.shown = reprlib.Repr()  # its keyword arguments are Python 3.12's; the image may be older
        self.shown.maxstring = self.shown.maxother = VALUE_CHARS
        self.shown.maxlist = self.shown.maxtuple = self.shown.maxdict = self.shown.maxset = 6
        self.shown.maxlevel = 2
        self.expressions: dict[tuple[str, int], list[tuple[str, ast.expr]]] = {}

    def read(self, frame: FrameType) -> list[list[str]]:
        """What the expressions of the line `frame` is about to run hold there."""
        line = (frame.f_code.co_filename, frame.f_lineno)
        if line not in self.expressions:
            self.expressions[line] = expressions(linecache.getline(*line))
        shown = []
        for text, node in self.expressions[line]:
            try:
                found = value(node, frame)
            except LookupError:  # not a value read without running code: nothing to show
                continue
            if not isinstance(found, NO_VALUE):
                shown.append([text, self.shown.repr(found)])
            if len(shown) == LINE_VALUES:
                break
        return shown


def expressions(text: str) -> list[tuple[str, ast.expr]]:
    """The names, attributes and subscripts the line `text` reads, outermost first, each once: the line as
    an expression, or as the statement it opens (`if ...:`, `x = ...`, `return ...`); none when it is
    neither."""
    code = text.strip().removesuffix(":")
    for keyword in OPENING:
        if code.startswith(keyword):
            code = code[len(keyword) :]
            break
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return []
    found: dict[str, ast.expr] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name | ast.Attribute | ast.Subscript) and not isinstance(node.ctx, ast.Store):
            found.setdefault(ast.unparse(node), node)
    return list(found.items())


def value(node: ast.expr, frame: FrameType) -> Any:
    """What `node` holds in `frame`, read without running the agent's code (LookupError: it cannot be)."""
    if isinstance(node, ast.Name):
        for scope in (frame.f_locals, frame.f_globals, frame.f_builtins):
            if node.id in scope:
                return scope[node.id]
        raise LookupError(node.id)
    if isinstance(node, ast.Attribute):
        try:
            found = inspect.getattr_static(value(node.value, frame), node.attr)
        except AttributeError as exc:
            raise LookupError(node.attr) from exc
        if hasattr(type(found), "__get__"):  # a method, property or slot: reading it runs code
            raise LookupError(node.attr)
        return found
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
        base = value(node.value, frame)
        if type(base) not in CONTAINERS:
            raise LookupError("a subscript of the agent's own type")
        try:
            return base[node.slice.value]
        except (KeyError, IndexError, TypeError) as exc:
            raise LookupError("no such item") from exc
    raise LookupError("not a name, attribute or constant subscript")
