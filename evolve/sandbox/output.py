"""Capped capture of a command's stdout and stderr, shared by the backends."""

from __future__ import annotations

import threading


class OutputCollector:
    """Collects stdout/stderr chunks up to a combined byte cap; thread-safe.

    Chunks past the cap are dropped and `over_limit` is set, so the caller can kill the command.
    `finished` is set by the reader once the streams end (or the cap is hit).
    """

    def __init__(self, limit_bytes: int) -> None:
        self._limit = limit_bytes
        self._stdout = bytearray()
        self._stderr = bytearray()
        self._lock = threading.Lock()
        self.over_limit = threading.Event()
        self.finished = threading.Event()

    def feed(self, stdout: bytes | None, stderr: bytes | None) -> bool:
        """Add a chunk; returns False once the cap is exceeded (the rest is dropped)."""
        with self._lock:
            for data, buffer in ((stdout, self._stdout), (stderr, self._stderr)):
                if not data:
                    continue
                room = self._limit - len(self._stdout) - len(self._stderr)
                buffer += data[: max(room, 0)]
                if len(data) > room:
                    self.over_limit.set()
                    self.finished.set()
        return not self.over_limit.is_set()

    def texts(self) -> tuple[str, str]:
        with self._lock:
            return (
                self._stdout.decode("utf-8", errors="replace"),
                self._stderr.decode("utf-8", errors="replace"),
            )
