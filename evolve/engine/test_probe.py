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
  `__getitem__` of the agent's own; evolve.engine.line_values).

The engine runs it after the text of evolve.engine.line_values (`evolve.engine.spectra.bootstrap`).

Only the tests' own process is traced. It runs inside the agent's sandbox, so what it writes is the agent's to
change: the engine reads it as untrusted data.
"""

import json
import os
import sys
import threading
from collections.abc import Iterator
from types import FrameType
from typing import Any

import pytest

if "LineValues" not in globals():  # imported (tests, type checks); the engine's text defines it first
    from evolve.engine.line_values import LineValues

MESSAGE_CHARS = 800
"""Of a failing test's report, the end kept (the exception and the line that raised it)."""
VALUE_LINES = 200
"""A test's lines whose values are kept (the first it ran)."""


class _Spectra:
    """The pytest plugin: traces each test's run of the agent's lines and writes its record."""

    def __init__(self, root: str, out: Any) -> None:
        self.root = root
        self.tests = os.path.join(root, "tests", "")
        self.out = out
        self.ran: set[tuple[str, int]] = set()
        self.values: dict[tuple[str, int], list[list[str]]] = {}
        self.failed: dict[str, str] = {}
        self.reader = LineValues()

    def local(self, frame: FrameType, event: str, arg: Any) -> Any:
        if event == "line":
            line = (frame.f_code.co_filename, frame.f_lineno)
            if line not in self.ran and len(self.values) < VALUE_LINES:
                self.values[line] = self.reader.read(frame)
            self.ran.add(line)
        return self.local

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
