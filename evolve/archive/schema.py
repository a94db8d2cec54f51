"""The SQLite schema of a run (WAL mode) and conversions from rows to typed records."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

from evolve.archive.records import Evaluation, Job, Node
from evolve.errors import EvolveError

SCHEMA_VERSION = 1

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
    detail TEXT
);
CREATE INDEX jobs_by_state ON jobs (state);
"""


def connect(path: Path) -> sqlite3.Connection:
    """A connection shared by the threads of one process (callers serialise access)."""
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


def migrate(connection: sqlite3.Connection) -> None:
    """Check the schema version; newer runs are refused rather than misread."""
    row = connection.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    version = int(row["value"]) if row else 0
    if version != SCHEMA_VERSION:
        raise EvolveError(f"run schema version {version} is not supported (this evolve reads {SCHEMA_VERSION})")


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
    return Job(
        id=row["id"],
        kind=row["kind"],
        node=row["node"],
        task=row["task"],
        state=row["state"],
        started=row["started"],
        finished=row["finished"],
        detail=row["detail"],
    )
