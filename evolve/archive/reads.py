"""How the archive's views read a long run (a mixin of `Run`): one state of a live run across several
queries (`snapshot`), and plain rows for a million results (`_rows`)."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager


class ViewReads:
    _db: sqlite3.Connection
    _lock: threading.RLock

    def _named_faults(self) -> AbstractContextManager[None]:
        raise NotImplementedError  # `Run` provides it

    @contextmanager
    def snapshot(self) -> Iterator[None]:
        """The queries inside see one state of the run: a live run's writer may commit between two
        queries of a view otherwise (a view that counts with several queries must not mix states)."""
        with self._lock:
            outer = self._db.in_transaction  # inside a transaction already: that one holds
            if not outer:
                self._db.execute("BEGIN")
            try:
                yield
            finally:
                if not outer:
                    self._db.execute("ROLLBACK")  # a read: nothing to keep

    def _rows(self, sql: str, params: tuple = ()) -> list[tuple]:
        """Plain tuples, not `sqlite3.Row`s: for views that read a long run's million rows."""
        with self._lock, self._named_faults():
            cursor = self._db.cursor()
            cursor.row_factory = None
            return cursor.execute(sql, params).fetchall()
