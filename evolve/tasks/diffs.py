"""Git-format unified diffs between in-memory file trees (reference patches for adapters)."""

from __future__ import annotations

import difflib
from collections.abc import Mapping

_NO_NEWLINE = "\\ No newline at end of file\n"


def _lines(text: str) -> list[str]:
    lines = text.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n" + _NO_NEWLINE  # difflib keeps it attached to its line; git wants the marker
    return lines


def file_diff(path: str, old: bytes | None, new: bytes) -> str:
    """The diff turning `old` (None: no such file) into `new` at `path`; empty when they are equal."""
    if old == new:
        return ""
    before, after = (old or b"").decode(), new.decode()
    body = difflib.unified_diff(
        _lines(before), _lines(after), "/dev/null" if old is None else f"a/{path}", f"b/{path}", n=3
    )
    head = [f"diff --git a/{path} b/{path}\n"] + (["new file mode 100644\n"] if old is None else [])
    hunks = "".join(line for n, line in enumerate(body) if n >= 2)  # difflib's ---/+++ lack git's form
    origin = "/dev/null" if old is None else f"a/{path}"
    return "".join(head) + f"--- {origin}\n+++ b/{path}\n" + hunks


def files_diff(old: Mapping[str, bytes], new: Mapping[str, bytes]) -> str:
    """Diff of the files in `new` against the same paths in `old` (files only in `old` stay as they are)."""
    return "".join(file_diff(path, old.get(path), new[path]) for path in sorted(new))
