"""Schema v2: job rows say what they are; v1 runs still open (read as they are, migrated by a writer)."""

from __future__ import annotations

import sqlite3
import threading

import pytest

from evolve.archive import Run
from evolve.archive.schema import SCHEMA_VERSION
from evolve.errors import EvolveError


_V1_JOBS = """CREATE TABLE jobs (
    id INTEGER PRIMARY KEY, kind TEXT NOT NULL, node TEXT NOT NULL, task TEXT,
    state TEXT NOT NULL CHECK (state IN ('started', 'finished', 'failed', 'cancelled')),
    started REAL NOT NULL, finished REAL, detail TEXT)"""


def downgrade_to_v1(path) -> None:
    """Turn a closed run into what evolve with schema v1 wrote: no split, attempt, requeue_of or
    decision, and an interrupted job that was run again says so in its `detail` only."""
    db = sqlite3.connect(path / "run.sqlite")
    db.execute("UPDATE jobs SET detail = (SELECT 'requeued as job ' || r.id FROM jobs r WHERE r.requeue_of = jobs.id)"
               " WHERE id IN (SELECT requeue_of FROM jobs)")
    db.execute("ALTER TABLE jobs RENAME TO jobs_v3")
    db.execute("DROP INDEX jobs_by_state")
    db.execute(_V1_JOBS)
    db.execute("CREATE INDEX jobs_by_state ON jobs (state)")
    db.execute("INSERT INTO jobs SELECT id, kind, node, task, state, started, finished, detail FROM jobs_v3")
    db.execute("DROP TABLE jobs_v3")
    db.execute("UPDATE meta SET value = '1' WHERE key = 'schema_version'")
    db.commit()
    db.close()


def test_a_requeue_copies_what_the_job_is_and_is_taken_once(run, code):
    node = run.add_node(code({"a.py": "x\n"}))
    job = run.start_job("evaluate", node.id, "h1", split="heldout")
    run.finish_job(job.id, "cancelled", "interrupted")
    again = run.start_job("evaluate", node.id, "h1", requeues=run.jobs("cancelled")[0])
    assert (again.kind, again.node, again.task, again.split, again.attempt, again.requeue_of) == (
        "evaluate", node.id, "h1", "heldout", 2, job.id)
    assert run.jobs()[1] == again
    with pytest.raises(EvolveError, match="not an interrupted job"):
        run.start_job("evaluate", node.id, "h1", requeues=run.jobs()[0])


def test_a_v1_run_opens_for_reading_unchanged_and_migrates_for_a_writer(tmp_path, code):
    path = tmp_path / "old"
    with Run.create(path) as run:
        node = run.add_node(code({"a.py": "x\n"}))
        run.start_job("evaluate", node.id, "h1")
    downgrade_to_v1(path)
    before = (path / "run.sqlite").read_bytes()
    with Run.open(path) as reader:
        (job,) = reader.jobs()
        assert (job.split, job.attempt, job.decision) == (None, 1, None)
    assert (path / "run.sqlite").read_bytes() == before
    with Run.open(path, writer=True) as writer:
        assert writer.meta("schema_version") == str(SCHEMA_VERSION)
        assert writer.meta("legacy_jobs_upto") == str(job.id)
        assert writer.jobs() == [job]


def test_two_creators_on_one_path_one_wins_the_other_is_refused(tmp_path):
    from evolve.config import RunConfig, RunSection

    results: list[object] = []
    barrier = threading.Barrier(2)

    def create(seed: int) -> None:
        barrier.wait()
        try:
            results.append(Run.create(tmp_path / "race", RunConfig(run=RunSection(seed=seed))))
        except EvolveError as exc:
            results.append(exc)

    threads = [threading.Thread(target=create, args=(seed,)) for seed in (1, 2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    winners = [r for r in results if isinstance(r, Run)]
    losers = [r for r in results if isinstance(r, EvolveError)]
    assert len(winners) == 1 and len(losers) == 1
    seed = winners[0].config.run.seed
    winners[0].close()
    with Run.open(tmp_path / "race") as reopened:
        assert reopened.config.run.seed == seed and reopened.meta("schema_version") == str(SCHEMA_VERSION)


def test_a_creator_killed_before_its_database_leaves_no_run(tmp_path):
    path = tmp_path / "half"
    path.mkdir()
    (path / "run.sqlite.creating").write_bytes(b"partial")
    (path / "run.toml").write_text("garbage")
    with Run.create(path) as run:
        assert run.nodes() == []
    assert not (path / "run.sqlite.creating").exists()
