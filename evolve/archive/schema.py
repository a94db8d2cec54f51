"""The SQLite schema of a run (WAL mode) and conversions from rows to typed records."""

from __future__ import annotations

import os
import sqlite3
import time
from pathlib import Path

from evolve.archive.records import Evaluation, Job, Node
from evolve.archive.vocab import (
    JobKind,
    JobState,
    NodeStatus,
    Outcome,
    Split,
    parse,
    parse_optional,
    sql_one_of,
)
from evolve.errors import EvolveError

SCHEMA_VERSION = 4
# v2: a job row records what it is (split, attempt, requeue_of, decision), so resume re-queues
# exactly that work. v3: no state in a job's `detail` text (a re-run is known by its `requeue_of`
# alone, unique), and the vocabulary columns are checked. v4: the outcome `forged`. Older runs are
# read as they are and migrated when a writer opens them.
READABLE_VERSIONS = (1, 2, 3, SCHEMA_VERSION)

_JOBS = f"""
CREATE TABLE jobs (
    id INTEGER PRIMARY KEY,
    kind TEXT NOT NULL CHECK (kind IN ({sql_one_of(JobKind)})),
    node TEXT NOT NULL,
    task TEXT,
    state TEXT NOT NULL CHECK (state IN ({sql_one_of(JobState)})),
    started REAL NOT NULL,
    finished REAL,
    detail TEXT,
    split TEXT CHECK (split IN ({sql_one_of(Split)})),
    attempt INTEGER NOT NULL DEFAULT 1,
    requeue_of INTEGER UNIQUE,
    decision INTEGER
);
CREATE INDEX jobs_by_state ON jobs (state);
"""
_JOB_COLUMNS = (
    "id",
    "kind",
    "node",
    "task",
    "state",
    "started",
    "finished",
    "detail",
    "split",
    "attempt",
    "requeue_of",
    "decision",
)
_V2_DEFAULTS = {"split": "NULL", "attempt": "1", "requeue_of": "NULL", "decision": "NULL"}  # a v1 row's

_EVALUATIONS = f"""
CREATE TABLE evaluations (
    id INTEGER PRIMARY KEY,
    node TEXT NOT NULL REFERENCES nodes(id),
    task TEXT NOT NULL,
    split TEXT NOT NULL DEFAULT 'dev',
    attempt INTEGER NOT NULL,
    outcome TEXT NOT NULL CHECK (outcome IN ({sql_one_of(Outcome)})),
    duration_s REAL,
    tokens INTEGER NOT NULL DEFAULT 0,
    log_path TEXT,
    created REAL NOT NULL,
    UNIQUE (node, task, attempt)
);
CREATE INDEX evaluations_by_node ON evaluations (node);
"""

_TABLES = (
    f"""
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
CREATE TABLE nodes (
    id TEXT PRIMARY KEY,
    parent TEXT REFERENCES nodes(id),
    commit_sha TEXT NOT NULL,
    created REAL NOT NULL,
    origin TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ({sql_one_of(NodeStatus)})),
    reason TEXT,
    instructions TEXT,
    tokens INTEGER NOT NULL DEFAULT 0,
    cost_usd REAL NOT NULL DEFAULT 0
);
"""
    + _EVALUATIONS
    + _JOBS
)

# The vocabulary columns a migration checks before it copies a row (a v3 table refuses the rest).
_VOCABULARY = (
    ("jobs", "kind", JobKind),
    ("jobs", "state", JobState),
    ("jobs", "split", Split),
    ("evaluations", "split", Split),
    ("evaluations", "outcome", Outcome),
    ("nodes", "status", NodeStatus),
)
_LEGACY_REQUEUED = "requeued as job "  # what v1 and v2 wrote into a re-run job's `detail`


def reader_uri(path: Path) -> str:
    """The URI every reader opens the database by (`mode=ro`: a reader never writes to the file)."""
    uri = f"{Path(path).resolve().as_uri()}?mode=ro"
    if os.statvfs(Path(path).parent).f_flag & os.ST_RDONLY:
        # A read-only mount: SQLite cannot make the WAL index there, and nothing can write the
        # file, so it is read as immutable.
        uri += "&immutable=1"
    return uri


def connect(path: Path, *, read_only: bool = False) -> sqlite3.Connection:
    """A connection shared by the threads of one process (callers serialise access).

    A reader opens the file with `mode=ro`, so no reader ever writes to it (a damaged or empty
    file stays byte-identical; SQLite would otherwise initialise a zero-byte file)."""
    if read_only:
        connection = sqlite3.connect(
            reader_uri(path), uri=True, isolation_level=None, check_same_thread=False, timeout=60.0
        )
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
    if found not in READABLE_VERSIONS:
        raise EvolveError(
            f"run schema version {found} is not supported (this evolve reads "
            f"{', '.join(map(str, READABLE_VERSIONS))})"
        )
    return found


def migrate(connection: sqlite3.Connection) -> None:
    """Bring a v1, v2 or v3 run to v4 in one transaction (writers only; readers read it as it is).

    The jobs table is rebuilt as a new run has it. A re-run job that v1 and v2 named only in the
    interrupted job's `detail` ("requeued as job N") gets its `requeue_of`, so nothing reads that
    text again. v1 job rows do not say their split; `legacy_jobs_upto` records the last of them,
    so a resume can still tell a runner's interrupted v1 evaluation (split inferred from its task)
    from a job of another command."""
    found = version(connection)
    if found == SCHEMA_VERSION:
        return
    connection.execute("BEGIN IMMEDIATE")
    try:
        _check_vocabulary(connection)
        if found == 1:
            (last,) = connection.execute("SELECT COALESCE(MAX(id), 0) FROM jobs").fetchone()
            connection.execute(
                "INSERT OR REPLACE INTO meta (key, value) VALUES ('legacy_jobs_upto', ?)", (str(last),)
            )
        if found < 3:
            _rebuild_jobs(connection)
        _rebuild_evaluations(connection)
        connection.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(SCHEMA_VERSION),))
    except BaseException:
        connection.execute("ROLLBACK")
        raise
    connection.execute("COMMIT")


def _check_vocabulary(connection: sqlite3.Connection) -> None:
    for table, column, vocabulary in _VOCABULARY:
        if column not in _columns(connection, table):
            continue  # a v1 run's jobs have no split
        values = connection.execute(f"SELECT DISTINCT {column} FROM {table} WHERE {column} IS NOT NULL")
        for (value,) in values:
            parse(vocabulary, value, f"{table}.{column}")


def _rebuild_jobs(connection: sqlite3.Connection) -> None:
    present = _columns(connection, "jobs")
    copied = ", ".join(c if c in present else f"{_V2_DEFAULTS[c]} AS {c}" for c in _JOB_COLUMNS)
    connection.execute("ALTER TABLE jobs RENAME TO jobs_before_v3")
    connection.execute("DROP INDEX jobs_by_state")
    for statement in _JOBS.split(";")[:-1]:  # not executescript: it would commit the migration midway
        connection.execute(statement)
    legacy = connection.execute(
        "SELECT id, CAST(substr(detail, ?) AS INTEGER) AS rerun FROM jobs_before_v3"
        " WHERE detail LIKE ? || '%'",
        (len(_LEGACY_REQUEUED) + 1, _LEGACY_REQUEUED),
    ).fetchall()
    connection.execute(
        f"INSERT INTO jobs ({', '.join(_JOB_COLUMNS)}) SELECT {copied} FROM jobs_before_v3 ORDER BY id"
    )
    for row in legacy:
        connection.execute(
            "UPDATE jobs SET requeue_of = ? WHERE id = ? AND requeue_of IS NULL", (row["id"], row["rerun"])
        )
    connection.execute("DROP TABLE jobs_before_v3")


def _rebuild_evaluations(connection: sqlite3.Connection) -> None:
    """The evaluations table as a new run has it (v4: its outcome check knows `forged`); rows kept as they
    are."""
    present = _columns(connection, "evaluations")
    connection.execute("ALTER TABLE evaluations RENAME TO evaluations_before_v4")
    connection.execute("DROP INDEX evaluations_by_node")
    for statement in _EVALUATIONS.split(";")[:-1]:
        connection.execute(statement)
    copied = ", ".join(c for c in _columns(connection, "evaluations") if c in present)
    connection.execute(
        f"INSERT INTO evaluations ({copied}) SELECT {copied} FROM evaluations_before_v4 ORDER BY id"
    )
    connection.execute("DROP TABLE evaluations_before_v4")


def _columns(connection: sqlite3.Connection, table: str) -> set[str]:
    return {row[1] for row in connection.execute(f"PRAGMA table_info({table})")}


def node_from_row(row: sqlite3.Row) -> Node:
    return Node(
        id=row["id"],
        parent=row["parent"],
        commit=row["commit_sha"],
        created=row["created"],
        origin=row["origin"],
        status=parse(NodeStatus, row["status"], "nodes.status"),
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
        split=parse(Split, row["split"], "evaluations.split"),
        outcome=parse(Outcome, row["outcome"], "evaluations.outcome"),
        duration_s=row["duration_s"],
        tokens=row["tokens"],
        log_path=row["log_path"],
        created=row["created"],
        id=row["id"],
    )


def job_from_row(row: sqlite3.Row) -> Job:
    keys = row.keys()  # a v1 row (read, not migrated) has none of the v2 columns
    return Job(
        id=row["id"],
        kind=parse(JobKind, row["kind"], "jobs.kind"),
        node=row["node"],
        task=row["task"],
        state=parse(JobState, row["state"], "jobs.state"),
        started=row["started"],
        finished=row["finished"],
        detail=row["detail"],
        split=parse_optional(Split, row["split"], "jobs.split") if "split" in keys else None,
        attempt=row["attempt"] if "attempt" in keys else 1,
        requeue_of=row["requeue_of"] if "requeue_of" in keys else None,
        decision=row["decision"] if "decision" in keys else None,
    )
