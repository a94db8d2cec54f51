"""Parsing Python source on the engine's threads.

CPython 3.11 keeps the AST constructor's recursion count per interpreter, not per thread, so two
threads parsing at once can fail with `SystemError: AST constructor recursion depth mismatch`
(python/cpython#106905; two expansions in flight parse agent code together). Each parse starts the
count afresh, so a parse that met that race is simply parsed again.
"""

from __future__ import annotations

import ast

RACE = "AST constructor recursion depth mismatch"
ATTEMPTS = 5


def parse(source: str | bytes, filename: str = "<unknown>") -> ast.Module:
    """`ast.parse(source, filename)`, again when another thread's parse raced it (SyntaxError propagates)."""
    for attempt in range(ATTEMPTS):
        try:
            return ast.parse(source, filename)
        except SystemError as exc:
            if RACE not in str(exc) or attempt == ATTEMPTS - 1:
                raise
    raise AssertionError("unreachable")
