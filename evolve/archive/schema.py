"""The SQLite schema of a run (WAL mode) and conversions from rows to typed records."""

from __future__ import annotations

import os
import sqlite3
import time
from pathlib import Path

from evolve.archive.records import Evaluation, Job, Node
from evolve.errors import EvolveError

SCHEMA_VERSION = 2
# v2: a job row records what it is (split, attempt, requeue_of, decision), so resume re-queues
# exactly that work. A v1 run is read as it is and migrated when a writer opens it.
_JOB_COLUMNS_V2 = (
    ("split", "TEXT"),
    ("attempt", "INTEGER NOT NULL DEFAULT 1"),
    ("requeue_of", "INTEGER"),
    ("decision", "INTEGER"),
)

_TABLES = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
CREATE TABLE nodes (
    id TEXT PRIMARY KEY,
    parent TEXT REFERENCES nodes(id),
    commit_sha TEXT NOT NULL,
    created REAL NOT NULL,
    origin TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('valid', 'invalid')),
    reason TEXT,
    instructions TEXT,
    tokens INTEGER NOT NULL DEFAULT 0,
    cost_usd REAL NOT NULL DEFAULT 0
);
CREATE TABLE evaluations (
    id INTEGER PRIMARY KEY,
    node TEXT NOT NULL REFERENCES nodes(id),
    task TEXT NOT NULL,
    split TEXT NOT NULL DEFAULT 'dev',
    attempt INTEGER NOT NULL,
    outcome TEXT NOT NULL CHECK (outcome IN ('pass', 'fail', 'timeout', 'error', 'infra')),
    duration_s REAL,
    tokens INTEGER NOT NULL DEFAULT 0,
    log_path TEXT,
    created REAL NOT NULL,
    UNIQUE (node, task, attempt)
);
CREATE INDEX evaluations_by_node ON evaluations (node);
CREATE TABLE jobs (
    id INTEGER PRIMARY KEY,
    kind TEXT NOT NULL,
    node TEXT NOT NULL,
    task TEXT,
    state TEXT NOT NULL CHECK (state IN ('started', 'finished', 'failed', 'cancelled')),
    started REAL NOT NULL,
    finished REAL,
    detail TEXT,
    split TEXT,
    attempt INTEGER NOT NULL DEFAULT 1,
    requeue_of INTEGER,
    decision INTEGER
);
CREATE INDEX jobs_by_state ON jobs (state);
"""


def connect(path: Path, *, read_only: bool = False) -> sqlite3.Connection:
    """A connection shared by the threads of one process (callers serialise access).

    A reader opens the file with `mode=ro`, so no reader ever writes to it (a damaged or empty
    file stays byte-identical; SQLite would otherwise initialise a zero-byte file)."""
    if read_only:
        uri = f"{Path(path).resolve().as_uri()}?mode=ro"
        if os.statvfs(Path(path).parent).f_flag & os.ST_RDONLY:
            # A read-only mount: SQLite cannot make the WAL index there, and nothing can write the
            # file, so it is read as immutable.
            uri += "&immutable=1"
        connection = sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False, timeout=60.0)
        connection.row_factory = sqlite3.Row
        connection.execute("PRAGMA busy_timeout=60000")
        return connection
    connection = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=60.0)
    connection.row_factory = sqlite3.Row
    connection.execute("PRAGMA journal_mode=WAL")
    connection.execute("PRAGMA synchronous=NORMAL")
    connection.execute("PRAGMA foreign_keys=ON")
    connection.execute("PRAGMA busy_timeout=60000")
    return connection


def create(connection: sqlite3.Connection, *, run_id: str, name: str) -> None:
    connection.executescript("BEGIN;" + _TABLES + "COMMIT;")
    with_meta = [
        ("schema_version", str(SCHEMA_VERSION)),
        ("run_id", run_id),
        ("name", name),
        ("created", repr(time.time())),
    ]
    connection.execute("BEGIN IMMEDIATE")
    connection.executemany("INSERT INTO meta (key, value) VALUES (?, ?)", with_meta)
    connection.execute("INSERT INTO counters (name, value) VALUES ('node', 0)")
    connection.execute("COMMIT")


def version(connection: sqlite3.Connection) -> int:
    """The run's schema version; newer (or unknown) runs are refused rather than misread."""
    row = connection.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    found = int(row["value"]) if row else 0
    if found not in (1, SCHEMA_VERSION):
        raise EvolveError(f"run schema version {found} is not supported (this evolve reads 1 and {SCHEMA_VERSION})")
    return found


def migrate(connection: sqlite3.Connection) -> None:
    """Bring a v1 run to v2 in one transaction (writers only; readers read v1 as it is).

    v1 job rows do not say their split; `legacy_jobs_upto` records the last of them, so a resume
    can still tell a runner's interrupted v1 evaluation (split inferred from its task) from a job
    of another command."""
    if version(connection) == SCHEMA_VERSION:
        return
    connection.execute("BEGIN IMMEDIATE")
    try:
        for column, kind in _JOB_COLUMNS_V2:
            connection.execute(f"ALTER TABLE jobs ADD COLUMN {column} {kind}")
        (last,) = connection.execute("SELECT COALESCE(MAX(id), 0) FROM jobs").fetchone()
        connection.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('legacy_jobs_upto', ?)", (str(last),))
        connection.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(SCHEMA_VERSION),))
    except BaseException:
        connection.execute("ROLLBACK")
        raise
    connection.execute("COMMIT")


def node_from_row(row: sqlite3.Row) -> Node:
    return Node(
        id=row["id"],
        parent=row["parent"],
        commit=row["commit_sha"],
        created=row["created"],
        origin=row["origin"],
        status=row["status"],
        reason=row["reason"],
        instructions=row["instructions"],
        tokens=row["tokens"],
        cost_usd=row["cost_usd"],
    )


def evaluation_from_row(row: sqlite3.Row) -> Evaluation:
    return Evaluation(
        node=row["node"],
        task=row["task"],
        attempt=row["attempt"],
        split=row["split"],
        outcome=row["outcome"],
        duration_s=row["duration_s"],
        tokens=row["tokens"],
        log_path=row["log_path"],
        created=row["created"],
        id=row["id"],
    )


def job_from_row(row: sqlite3.Row) -> Job:
    keys = row.keys()  # a v1 row (read, not migrated) has none of the v2 columns
    extra = {column: row[column] for column, _ in _JOB_COLUMNS_V2 if column in keys}
    return Job(
        **extra,
        id=row["id"],
        kind=row["kind"],
        node=row["node"],
        task=row["task"],
        state=row["state"],
        started=row["started"],
        finished=row["finished"],
        detail=row["detail"],
    )
