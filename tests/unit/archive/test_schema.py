"""Schema v3: job rows say what they are, with no state in their `detail` text; v1 and v2 runs still
open (read as they are, migrated by a writer), checked on a v2 run that evolve at 9c40030 made."""

from __future__ import annotations

import json
import sqlite3
import tarfile
import threading
from dataclasses import asdict
from pathlib import Path

import pytest

from evolve.archive import Run, schema
from evolve.archive.schema import SCHEMA_VERSION
from evolve.archive.summary import run_summary
from evolve.archive.vocab import UnknownValue
from evolve.errors import EvolveError

V2_RUN = Path(__file__).parents[2] / "data" / "runs" / "v2-run.tar.gz"
V2_ANSWERS = json.loads(V2_RUN.with_name("v2-run.json").read_text())
"""What evolve at 9c40030 answered on that run (tests/data/runs/make_v2_run.py)."""
V2_STATUS = {
    **V2_ANSWERS["status"],
    "cpu_hours": 0.0001,
    "best_node": {
        "evaluated": 6,
        "id": "0",
        "passed": 4,
        "lineage": ["0"],
        "rule": "HGM's best belief: the valid node with the highest 0.25-quantile of Beta(1+passed, "
        "1+failed) among those "
        "with >= 5 dev results (else >= 1)",
    },
}
"""The status 9c40030 gave, but for the best node's counts, which now follow the search's counting rule
(its 3 held-out results, 2 passed, no longer count: 6 and 4 instead of 9 and 6), CPU-hours, and the
best node's lineage and rule (the run's policy's, `evolve.archive.best`), new since."""
V2_STATUS["evaluations"] = {**V2_ANSWERS["status"]["evaluations"], "forged": 0}
V2_STATUS["flagged"] = []


def v2_run(tmp_path: Path) -> Path:
    """A fresh copy of the v2 fixture run."""
    with tarfile.open(V2_RUN) as tar:
        tar.extractall(tmp_path, filter="data")
    return tmp_path / "run"


def status(run: Run) -> dict:
    return {**run_summary(run), "path": None}


_V1_JOBS = """CREATE TABLE jobs (
    id INTEGER PRIMARY KEY, kind TEXT NOT NULL, node TEXT NOT NULL, task TEXT,
    state TEXT NOT NULL CHECK (state IN ('started', 'finished', 'failed', 'cancelled')),
    started REAL NOT NULL, finished REAL, detail TEXT)"""


def downgrade_to_v1(path) -> None:
    """Turn a closed run into what evolve with schema v1 wrote: no split, attempt, requeue_of or
    decision, and an interrupted job that was run again says so in its `detail` only."""
    db = sqlite3.connect(path / "run.sqlite")
    db.execute(
        "UPDATE jobs SET detail = (SELECT 'requeued as job ' || r.id FROM jobs r"
        " WHERE r.requeue_of = jobs.id)"
        " WHERE id IN (SELECT requeue_of FROM jobs)"
    )
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
        "evaluate",
        node.id,
        "h1",
        "heldout",
        2,
        job.id,
    )
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


def _schema(path: Path) -> set[tuple[str, str]]:
    with sqlite3.connect(path / "run.sqlite") as db:
        return set(db.execute("SELECT name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_autoindex%'"))


def test_a_v2_run_reads_as_it_was_written_and_its_file_is_not_touched(tmp_path):
    path = v2_run(tmp_path)
    before = (path / "run.sqlite").read_bytes()
    with Run.open(path) as reader:
        assert [asdict(job) for job in reader.jobs()] == V2_ANSWERS["jobs"]
        assert status(reader) == V2_STATUS
        assert reader.decisions_recorded() == V2_ANSWERS["decisions_recorded"]
    assert (path / "run.sqlite").read_bytes() == before


def test_a_v2_run_migrates_to_the_schema_of_a_new_run_and_answers_the_same(tmp_path):
    path = v2_run(tmp_path)
    with Run.open(path, writer=True) as writer:
        assert writer.meta("schema_version") == str(SCHEMA_VERSION) == "4"
        assert [asdict(job) for job in writer.jobs()] == V2_ANSWERS["jobs"]
        assert status(writer) == V2_STATUS
        assert writer.decisions_recorded() == V2_ANSWERS["decisions_recorded"]
    Run.create(tmp_path / "new").close()
    assert _schema(path) == _schema(tmp_path / "new")
    with Run.open(path, writer=True) as again:  # a v3 run is not migrated twice
        assert status(again) == V2_STATUS


def test_a_v1_re_run_named_only_in_detail_text_gets_its_requeue_of(tmp_path):
    path = v2_run(tmp_path)
    downgrade_to_v1(path)  # job 17 says "requeued as job 20"; job 20 does not say what it re-runs
    with Run.open(path, writer=True) as writer:
        jobs = {job.id: job for job in writer.jobs()}
        assert writer.meta("legacy_jobs_upto") == "21"
    assert jobs[17].detail == "requeued as job 20" and jobs[20].requeue_of == 17
    assert [j.id for j in jobs.values() if j.requeue_of is not None] == [20]


def test_a_job_is_run_again_once_even_past_the_archive_api(run, code):
    node = run.add_node(code({"a.py": "x\n"}))
    job = run.start_job("evaluate", node.id, "t1", split="dev")
    run.finish_job(job.id, "cancelled", "interrupted")
    run.start_job("evaluate", node.id, "t1", requeues=job)
    with pytest.raises(sqlite3.IntegrityError, match="UNIQUE"):
        run._db.execute(
            "INSERT INTO jobs (kind, node, state, started, requeue_of) VALUES "
            "('evaluate', '0', 'started', 0, ?)",
            (job.id,),
        )


@pytest.mark.parametrize(
    ("table", "column", "value"),
    [
        ("jobs", "kind", "grade"),
        ("jobs", "state", "paused"),
        ("jobs", "split", "test"),
        ("evaluations", "split", "train"),
        ("evaluations", "outcome", "skipped"),
        ("nodes", "status", "pruned"),
    ],
)
def test_an_unknown_value_is_one_clear_error_naming_it_and_its_column(tmp_path, table, column, value):
    path = v2_run(tmp_path)
    with sqlite3.connect(path / "run.sqlite") as db:  # what a newer evolve (or damage) might have written
        db.execute("PRAGMA ignore_check_constraints = ON")
        db.execute(f"UPDATE {table} SET {column} = ? WHERE id = 2", (value,))
    before = (path / "run.sqlite").read_bytes()
    expected = f"unknown value '{value}' in column {table}.{column}"
    with Run.open(path) as reader, pytest.raises(UnknownValue, match=expected) as raised:
        {"jobs": reader.jobs, "evaluations": reader.evaluations, "nodes": reader.nodes}[table]()
    assert "\n" not in str(raised.value)
    with pytest.raises(UnknownValue, match=expected):
        Run.open(path, writer=True)
    assert (path / "run.sqlite").read_bytes() == before  # the migration was rolled back


def test_a_v3_run_migrates_to_take_a_forged_verdict(tmp_path, code):
    path = tmp_path / "v3"
    with Run.create(path) as run:
        node = run.add_node(code({"a.py": "x\n"}))
        run.record_evaluation(node.id, "t1", "pass")
    db = sqlite3.connect(path / "run.sqlite")  # as evolve with schema v3 wrote it: no `forged` in the check
    db.execute("ALTER TABLE evaluations RENAME TO e4")
    db.execute("DROP INDEX evaluations_by_node")
    db.executescript(schema._EVALUATIONS.replace(", 'forged'", ""))
    db.execute("INSERT INTO evaluations SELECT * FROM e4")
    db.execute("DROP TABLE e4")
    db.execute("UPDATE meta SET value = '3' WHERE key = 'schema_version'")
    db.commit()
    db.close()
    with Run.open(path, writer=True) as writer:
        writer.record_evaluation(node.id, "t2", "forged")
        assert [e.outcome for e in writer.evaluations()] == ["pass", "forged"]
    Run.create(tmp_path / "new").close()
    assert _schema(path) == _schema(tmp_path / "new")
