"""A run's job rows: what each dispatched job is, its state, and its re-runs (a mixin of `Run`)."""

from __future__ import annotations

import sqlite3
import time
from contextlib import AbstractContextManager
from pathlib import Path

from evolve.archive import schema
from evolve.archive.records import JOB_STATES, Job
from evolve.errors import EvolveError


class JobRows:
    """`start_job` before the work, `finish_job` after it; the rows a resume reads."""

    path: Path

    def _transaction(self) -> AbstractContextManager[sqlite3.Connection]:
        raise NotImplementedError  # `Run` provides it

    def _query(self, sql: str, params: tuple = ()) -> list[sqlite3.Row]:
        raise NotImplementedError  # `Run` provides it

    def start_job(self, kind: str, node_id: str, task: str | None = None, *, split: str | None = None,
                  requeues: Job | None = None, decision: int | None = None) -> Job:
        """Write `started` before the work, so a crash leaves a row that says what to run again.

        `requeues` is an interrupted (cancelled) job this one re-runs: the new row copies what it
        is (kind, node, task, split, decision) with the next attempt number, and the old one is
        marked in the same transaction, so it is re-queued exactly once.
        """
        started = time.time()
        attempt, requeue_of = 1, None
        if requeues is not None:
            kind, node_id, task = requeues.kind, requeues.node, requeues.task
            split, decision = requeues.split, requeues.decision
            attempt, requeue_of = requeues.attempt + 1, requeues.id
        with self._transaction() as db:
            cursor = db.execute(
                "INSERT INTO jobs (kind, node, task, state, started, split, attempt, requeue_of, decision)"
                " VALUES (?, ?, ?, 'started', ?, ?, ?, ?, ?)",
                (kind, node_id, task, started, split, attempt, requeue_of, decision),
            )
            if requeue_of is not None:
                marked = db.execute(
                    "UPDATE jobs SET detail = ? WHERE id = ? AND state = 'cancelled'"
                    " AND (detail IS NULL OR detail NOT LIKE 'requeued%')",
                    (f"requeued as job {cursor.lastrowid}", requeue_of),
                ).rowcount
                if not marked:
                    raise EvolveError(f"job {requeue_of} of run {self.path} is not an interrupted job to re-run")
        return Job(cursor.lastrowid, kind, node_id, task, "started", started, split=split, attempt=attempt,
                   requeue_of=requeue_of, decision=decision)

    def decisions_recorded(self) -> int:
        """How many search decisions the run has recorded (a resumed runner numbers on from here)."""
        (row,) = self._query("SELECT MAX(decision) + 1, COUNT(*) FROM jobs")
        # a v1 run numbered its decisions by jobs started
        return int(row[0]) if row[0] is not None else int(row[1])

    def finish_job(self, job_id: int, state: str, detail: str | None = None) -> None:
        """Move a started job to `finished`, `failed` or `cancelled`."""
        with self._transaction() as db:
            self._finish_job(db, job_id, state, detail)

    def _finish_job(self, db: sqlite3.Connection, job_id: int, state: str, detail: str | None) -> None:
        if state not in JOB_STATES or state == "started":
            raise ValueError(f"a job ends as finished, failed or cancelled, not {state!r}")
        changed = db.execute(
            "UPDATE jobs SET state = ?, finished = ?, detail = ? WHERE id = ? AND state = 'started'",
            (state, time.time(), detail, job_id),
        ).rowcount
        if not changed:
            raise EvolveError(f"job {job_id} is not a started job of run {self.path}")

    def adopt_job(self, job: Job) -> None:
        """Insert a job exactly as given, id included (importers)."""
        with self._transaction() as db:
            db.execute(
                "INSERT INTO jobs (id, kind, node, task, state, started, finished, detail, split, attempt,"
                " requeue_of, decision) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (job.id, job.kind, job.node, job.task, job.state, job.started, job.finished, job.detail,
                 job.split, job.attempt, job.requeue_of, job.decision),
            )

    def job_seconds(self, now: float) -> float:
        """Wall seconds of every job, evaluations and expansions alike; a job not ended counts to `now`."""
        (row,) = self._query("SELECT COALESCE(SUM(MAX(COALESCE(finished, ?) - started, 0)), 0) FROM jobs", (now,))
        return float(row[0])

    def jobs(self, state: str | None = None) -> list[Job]:
        if state is None:
            rows = self._query("SELECT * FROM jobs ORDER BY id")
        else:
            rows = self._query("SELECT * FROM jobs WHERE state = ? ORDER BY id", (state,))
        return [schema.job_from_row(r) for r in rows]
