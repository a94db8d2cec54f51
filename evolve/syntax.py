"""Parsing Python source on the engine's threads.

CPython 3.11 keeps the AST constructor's recursion count per interpreter, not per thread, so two
threads parsing at once can fail with `SystemError: AST constructor recursion depth mismatch`
(python/cpython#106905; two expansions in flight parse agent code together). Retrying alone does not
converge: four threads parsing 600-line files kept colliding five times in a row in CI. So the
engine's parses take turns under one lock, and a parse that still met the race (a library's own
`ast.parse` on another thread) is parsed again.
"""

from __future__ import annotations

import ast
import threading

RACE = "AST constructor recursion depth mismatch"
ATTEMPTS = 5
_TURNS = threading.Lock()
"""The interpreter's AST constructor is one per process; this lock is its turn-taking, not state of ours."""


def parse(source: str | bytes, filename: str = "<unknown>") -> ast.Module:
    """`ast.parse(source, filename)`, one thread at a time, again when another parse raced it.

    SyntaxError for anything that does not parse, including what `ast.parse` reports otherwise: a null
    byte (a ValueError on some releases) and nesting too deep for the parser (RecursionError, MemoryError), so
    a caller reading agent-written code on the host catches one exception."""
    for attempt in range(ATTEMPTS):
        try:
            with _TURNS:
                return ast.parse(source, filename)
        except SystemError as exc:
            if RACE not in str(exc) or attempt == ATTEMPTS - 1:
                raise
        except (ValueError, RecursionError, MemoryError) as exc:
            raise SyntaxError(f"{type(exc).__name__}: {exc}"[:200]) from None
    raise AssertionError("unreachable")


def parsed(source: str | bytes) -> ast.Module | None:
    """`parse(source)`, or None for source that does not parse (read as code with nothing in it)."""
    try:
        return parse(source)
    except SyntaxError:
        return None
