"""Run an agent's own tests with each test's lines apart: the bootstrap evolve.engine.spectra injects.

The engine runs this file's text as `python3 -c TEXT OUT` in the agent's sandbox, with the agent's root as the
working directory, in place of the gate's `python3 -m pytest tests`. It needs only the standard library and
the pytest the agent's tests already use, and leaves one file in the directory OUT:

- `tests`: one JSON object a line for each test that ran, in order: its pytest id (`test`), whether it failed
  (`failed`: its setup, call or teardown failed), the end of its failure report (`message`) and the lines of
  the agent's files outside `tests/` it ran (`lines`: path relative to the root -> sorted line numbers).
  Lines run while pytest collected the tests (imports, definitions) belong to no test. A failing test's
  record also holds what the names its lines read held the first time each line ran (`values`: path ->
  line -> [[expression, repr], ...]), as a debugger would show them: the names, attributes and constant
  subscripts of the line's expression, read without running the agent's code (no call, no property, no
  `__getitem__` of the agent's own), values that are functions, classes or modules left out.

Only the tests' own process is traced. It runs inside the agent's sandbox, so what it writes is the agent's to
change: the engine reads it as untrusted data.
"""

from __future__ import annotations

import ast
import inspect
import json
import linecache
import os
import re
import reprlib
import sys
import threading
import types
from collections.abc import Iterator
from types import FrameType
from typing import Any

import pytest

MESSAGE_CHARS = 800
"""Of a failing test's report, the end kept (the exception and the line that raised it)."""
VALUE_LINES = 200
"""A test's lines whose values are kept (the first it ran)."""
LINE_VALUES = 4
"""The expressions of one line whose values are kept (the outermost first)."""
VALUE_CHARS = 80
"""A value's repr is cut at this (each container at 6 items, 2 levels deep): a large one costs what a small
one does."""
CONTAINERS = (str, bytes, list, tuple, dict, re.Match)
"""What a subscript is read from: types whose `[...]` runs none of the agent's code."""
NO_VALUE = (types.ModuleType, type, types.FunctionType, types.BuiltinFunctionType, types.MethodType)
"""What a name can hold that is not data: left out of a line's values."""


class _Spectra:
    """The pytest plugin: traces each test's run of the agent's lines and writes its record."""

    def __init__(self, root: str, out: Any) -> None:
        self.root = root
        self.shown = reprlib.Repr()  # its keyword arguments are Python 3.12's; the image may be older
        self.shown.maxstring = self.shown.maxother = VALUE_CHARS
        self.shown.maxlist = self.shown.maxtuple = self.shown.maxdict = self.shown.maxset = 6
        self.shown.maxlevel = 2
        self.tests = os.path.join(root, "tests", "")
        self.out = out
        self.ran: set[tuple[str, int]] = set()
        self.values: dict[tuple[str, int], list[list[str]]] = {}
        self.failed: dict[str, str] = {}
        self.expressions: dict[tuple[str, int], list[tuple[str, ast.expr]]] = {}

    def local(self, frame: FrameType, event: str, arg: Any) -> Any:
        if event == "line":
            line = (frame.f_code.co_filename, frame.f_lineno)
            if line not in self.ran and len(self.values) < VALUE_LINES:
                self.values[line] = self.read(line, frame)
            self.ran.add(line)
        return self.local

    def read(self, line: tuple[str, int], frame: FrameType) -> list[list[str]]:
        """What the expressions of `line` held as it was about to run in `frame`."""
        if line not in self.expressions:
            self.expressions[line] = _expressions(linecache.getline(*line))
        shown = []
        for text, node in self.expressions[line]:
            try:
                value = _value(node, frame)
            except LookupError:  # not a value this probe reads without running code: nothing to show
                continue
            if not isinstance(value, NO_VALUE):
                shown.append([text, self.shown.repr(value)])
            if len(shown) == LINE_VALUES:
                break
        return shown

    def call(self, frame: FrameType, event: str, arg: Any) -> Any:
        name = frame.f_code.co_filename
        return self.local if name.startswith(self.root) and not name.startswith(self.tests) else None

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item: Any, nextitem: Any) -> Iterator[None]:
        self.ran.clear()
        self.values.clear()
        threading.settrace(self.call)
        sys.settrace(self.call)
        try:
            yield
        finally:
            sys.settrace(None)
            threading.settrace(None)
        lines: dict[str, list[int]] = {}
        for path, number in self.ran:
            lines.setdefault(path[len(self.root) :], []).append(number)
        record = {
            "test": item.nodeid,
            "failed": item.nodeid in self.failed,
            "message": self.failed.get(item.nodeid, ""),
            "lines": {path: sorted(numbers) for path, numbers in sorted(lines.items())},
        }
        if record["failed"]:
            values: dict[str, dict[str, list[list[str]]]] = {}
            for (path, number), shown in self.values.items():
                if shown:
                    values.setdefault(path[len(self.root) :], {})[str(number)] = shown
            record["values"] = values
        self.out.write(json.dumps(record) + "\n")

    def pytest_runtest_logreport(self, report: Any) -> None:
        if report.failed and report.nodeid not in self.failed:
            self.failed[report.nodeid] = str(report.longreprtext)[-MESSAGE_CHARS:]


def _expressions(text: str) -> list[tuple[str, ast.expr]]:
    """The names, attributes and subscripts the line `text` reads, outermost first, each once: the line as
    an expression, or as the statement it opens (`if ...:`, `x = ...`, `return ...`); none when it is
    neither."""
    code = text.strip()
    code = code.removesuffix(":")
    for keyword in ("if ", "elif ", "while ", "return ", "assert ", "yield "):
        if code.startswith(keyword):
            code = code[len(keyword) :]
            break
    try:
        tree: ast.AST = ast.parse(code)
    except SyntaxError:
        return []
    found: dict[str, ast.expr] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name | ast.Attribute | ast.Subscript) and not isinstance(node.ctx, ast.Store):
            found.setdefault(ast.unparse(node), node)
    return list(found.items())


def _value(node: ast.expr, frame: FrameType) -> Any:
    """What `node` holds in `frame`, read without running the agent's code (LookupError: it cannot be)."""
    if isinstance(node, ast.Name):
        for scope in (frame.f_locals, frame.f_globals, frame.f_builtins):
            if node.id in scope:
                return scope[node.id]
        raise LookupError(node.id)
    if isinstance(node, ast.Attribute):
        try:
            found = inspect.getattr_static(_value(node.value, frame), node.attr)
        except AttributeError as exc:
            raise LookupError(node.attr) from exc
        if hasattr(type(found), "__get__"):  # a method, property or slot: reading it runs code
            raise LookupError(node.attr)
        return found
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
        base = _value(node.value, frame)
        if type(base) not in CONTAINERS:
            raise LookupError("a subscript of the agent's own type")
        try:
            return base[node.slice.value]
        except (KeyError, IndexError, TypeError) as exc:
            raise LookupError("no such item") from exc
    raise LookupError("not a name, attribute or constant subscript")


def main() -> None:
    out = sys.argv[1]
    root = os.path.join(os.getcwd(), "")
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "tests"), "a", buffering=1, encoding="utf-8") as records:
        sys.path.insert(0, os.getcwd())  # as `python3 -m pytest` has it
        code = pytest.main(["-q", "-p", "no:cacheprovider", "tests"], plugins=[_Spectra(root, records)])
    sys.exit(int(code))


if __name__ == "__main__":
    main()
