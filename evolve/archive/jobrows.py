"""A run's job rows: what each dispatched job is, its state, and its re-runs (a mixin of `Run`)."""

from __future__ import annotations

import sqlite3
import time
from contextlib import AbstractContextManager
from pathlib import Path

from evolve.archive import schema
from evolve.archive.records import Job
from evolve.archive.vocab import JobKind, JobState, Split
from evolve.errors import EvolveError

_ENDS = (JobState.FINISHED, JobState.FAILED, JobState.CANCELLED)


MADE = "node "
"""How a finished expansion job's detail begins: the node it made follows."""


class JobRows:
    """`start_job` before the work, `finish_job` after it; the rows a resume reads."""

    path: Path

    def _transaction(self) -> AbstractContextManager[sqlite3.Connection]:
        raise NotImplementedError  # `Run` provides it

    def _query(self, sql: str, params: tuple = ()) -> list[sqlite3.Row]:
        raise NotImplementedError  # `Run` provides it

    def start_job(
        self,
        kind: JobKind,
        node_id: str,
        task: str | None = None,
        *,
        split: Split | None = None,
        requeues: Job | None = None,
        decision: int | None = None,
    ) -> Job:
        """Write `started` before the work, so a crash leaves a row that says what to run again.

        `requeues` is an interrupted (cancelled) job this one re-runs: the new row copies what it
        is (kind, node, task, split, decision) with the next attempt number; it is refused when a
        job re-runs the old one already, so an interrupted job is re-queued exactly once.
        """
        started = time.time()
        kind, split = JobKind(kind), None if split is None else Split(split)
        attempt, requeue_of = 1, None
        if requeues is not None:
            kind, node_id, task = requeues.kind, requeues.node, requeues.task
            split, decision = requeues.split, requeues.decision
            attempt, requeue_of = requeues.attempt + 1, requeues.id
        with self._transaction() as db:
            if requeue_of is not None:
                self._check_rerunnable(db, requeue_of)
            cursor = db.execute(
                "INSERT INTO jobs (kind, node, task, state, started, split, attempt, requeue_of, decision)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (kind, node_id, task, JobState.STARTED, started, split, attempt, requeue_of, decision),
            )
        job_id = cursor.lastrowid
        if job_id is None:  # SQLite gives every inserted row an id; this is only for the type
            raise EvolveError(f"run {self.path} gave the new job no id")
        return Job(
            job_id,
            kind,
            node_id,
            task,
            JobState.STARTED,
            started,
            split=split,
            attempt=attempt,
            requeue_of=requeue_of,
            decision=decision,
        )

    def _check_rerunnable(self, db: sqlite3.Connection, job_id: int) -> None:
        """An interrupted job is run again once: it is `cancelled` and no job says it re-runs it yet
        (the column is unique too, so a second re-run could not be written anyway)."""
        found = db.execute(
            "SELECT 1 FROM jobs WHERE id = ? AND state = ?"
            " AND NOT EXISTS (SELECT 1 FROM jobs WHERE requeue_of = ?)",
            (job_id, JobState.CANCELLED, job_id),
        ).fetchone()
        if found is None:
            raise EvolveError(f"job {job_id} of run {self.path} is not an interrupted job to re-run")

    def decisions_recorded(self) -> int:
        """How many search decisions the run has recorded (a resumed runner numbers on from here)."""
        (row,) = self._query("SELECT MAX(decision) + 1, COUNT(*) FROM jobs")
        # a v1 run numbered its decisions by jobs started
        return int(row[0]) if row[0] is not None else int(row[1])

    def finish_job(self, job_id: int, state: JobState, detail: str | None = None) -> None:
        """Move a started job to `finished`, `failed` or `cancelled`; `detail` is text for people."""
        with self._transaction() as db:
            self._finish_job(db, job_id, state, detail)

    def _finish_job(self, db: sqlite3.Connection, job_id: int, state: JobState, detail: str | None) -> None:
        if state not in _ENDS:
            raise ValueError(f"a job ends as {', '.join(_ENDS)}, not {state!r}")
        changed = db.execute(
            "UPDATE jobs SET state = ?, finished = ?, detail = ? WHERE id = ? AND state = ?",
            (state, time.time(), detail, job_id, JobState.STARTED),
        ).rowcount
        if not changed:
            raise EvolveError(f"job {job_id} is not a started job of run {self.path}")

    def adopt_job(self, job: Job) -> None:
        """Insert a job exactly as given, id included (importers)."""
        with self._transaction() as db:
            db.execute(
                "INSERT INTO jobs (id, kind, node, task, state, started, finished, detail, split, attempt,"
                " requeue_of, decision) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    job.id,
                    job.kind,
                    job.node,
                    job.task,
                    job.state,
                    job.started,
                    job.finished,
                    job.detail,
                    job.split,
                    job.attempt,
                    job.requeue_of,
                    job.decision,
                ),
            )

    def job_seconds(self, now: float | None = None) -> float:
        """Wall seconds of the jobs that ran, evaluations and expansions alike: ended ones (not cancelled: an
        interrupted job ends when a resume finds it, maybe days later, and its re-run counts), and with
        `now` those still running, up to `now`."""
        (row,) = self._query(
            "SELECT COALESCE(SUM(MAX(COALESCE(finished, ?) - started, 0)), 0) FROM jobs WHERE state != ?",
            (now, JobState.CANCELLED),
        )
        return float(row[0])

    def job_totals(self) -> dict[JobKind, tuple[int, float]]:
        """Per kind, the ended jobs (not cancelled, as `job_seconds` counts them) and their wall seconds."""
        rows = self._query(
            "SELECT kind, COUNT(*), COALESCE(SUM(MAX(finished - started, 0)), 0) FROM jobs"
            " WHERE finished IS NOT NULL AND state != ? GROUP BY kind",
            (JobState.CANCELLED,),
        )
        found = {JobKind(row[0]): (int(row[1]), float(row[2])) for row in rows}
        return {kind: found.get(kind, (0, 0.0)) for kind in JobKind}

    def job(self, job_id: int) -> Job:
        """One job's row."""
        rows = self._query("SELECT * FROM jobs WHERE id = ?", (job_id,))
        if not rows:
            raise EvolveError(f"run {self.path} has no job {job_id}")
        return schema.job_from_row(rows[0])

    def jobs(self, state: JobState | None = None) -> list[Job]:
        if state is None:
            rows = self._query("SELECT * FROM jobs ORDER BY id")
        else:
            rows = self._query("SELECT * FROM jobs WHERE state = ? ORDER BY id", (state,))
        return [schema.job_from_row(r) for r in rows]


def made_node(job: Job) -> str | None:
    """The node a finished expansion job made (the archive finishes it with `node <id>`, `Run.add_node`)."""
    if job.kind != JobKind.EXPAND or job.detail is None or not job.detail.startswith(MADE):
        return None
    return job.detail.removeprefix(MADE)
