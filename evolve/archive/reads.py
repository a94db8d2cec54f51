"""How the archive's views read a long run (a mixin of `Run`): one state of a live run across several
queries (`snapshot`), and plain rows (`_rows`) or Arrow columns (`_table`) for a million results."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from evolve.archive.schema import reader_uri

if TYPE_CHECKING:
    import pyarrow as pa

_ONE_BATCH = 1 << 30
"""Rows per Arrow batch: all of them. The ADBC SQLite driver types each column by its first batch, so a
column that is NULL throughout a first batch would be typed int64 and refuse a later string."""


class ViewReads:
    path: Path
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

    def _table(self, sql: str) -> pa.Table:
        """The result as Arrow columns, read in C by the ADBC SQLite driver through its own read-only
        connection (it sees what is committed): a Python object per cell is most of the time `_rows`
        takes for a long run's million results, and none is made here."""
        import adbc_driver_sqlite.dbapi as adbc
        from adbc_driver_sqlite import StatementOptions

        with (
            self._named_faults(),
            adbc.connect(reader_uri(self.path / "run.sqlite")) as db,
            db.cursor() as cursor,
        ):
            cursor.execute("PRAGMA busy_timeout=60000")  # as the run's own reader waits out a writer's lock
            cursor.adbc_statement.set_options(**{StatementOptions.BATCH_ROWS.value: str(_ONE_BATCH)})
            cursor.execute(sql)
            return cursor.fetch_arrow_table()
