"""An evolution on a local Ray cluster (head + one worker node); the worker node is killed midway.

Checks: the run completes on what is left; the jobs the dead node held were re-run (their attempts
log says so) and each dispatched job finished exactly once; no result counted twice; clade counts
equal a recount; no container left on the Docker engine.
"""

import json
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from contextlib import closing
from pathlib import Path

from evolve.archive import Run
from evolve.cluster.local import LocalRayCluster
from tests.integration.scripted import assert_clades_recount

ROOT = Path(__file__).resolve().parents[3]
SCRIPT = [sys.executable, "-m", "tests.integration.cluster.ray_evolution"]
"""Run from the repository root, where `tests` imports."""
BUDGET = 8


def _progress(run_path: Path) -> tuple[int, int]:
    """(evaluations recorded, jobs in flight) of the live run, read-only (`Run.open` repairs, a writer's
    job)."""
    database = run_path / "run.sqlite"
    if not database.exists():
        return 0, 0
    try:
        with closing(sqlite3.connect(f"file:{database}?mode=ro", uri=True, timeout=10)) as db:
            evaluations = db.execute("SELECT COUNT(*) FROM evaluations").fetchone()[0]
            in_flight = db.execute("SELECT COUNT(*) FROM jobs WHERE state = 'started'").fetchone()[0]
    except sqlite3.OperationalError:  # the schema is still being written
        return 0, 0
    return evaluations, in_flight


def test_a_worker_node_killed_midway_loses_no_job_and_counts_nothing_twice(
    tmp_path, docker_client, base_image, ray_module
):
    run_path = tmp_path / "on-ray"
    with LocalRayCluster(head_cpus=1, worker_cpus=(2,)) as cluster:
        evolution = subprocess.Popen(
            [*SCRIPT, str(tmp_path), cluster.address],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        deadline = time.monotonic() + 600
        while evolution.poll() is None and time.monotonic() < deadline:
            evaluations, in_flight = _progress(run_path)
            if evaluations >= 3 and in_flight >= 3:  # the head takes one job at a time: two are on the worker
                break
            time.sleep(0.5)
        assert evolution.poll() is None, evolution.stdout.read()
        cluster.workers[0].kill()
        output, _ = evolution.communicate(timeout=900)
    assert evolution.returncode == 0, output
    assert f"evaluation budget spent ({BUDGET}/{BUDGET})" in output

    with Run.open(run_path) as run:
        jobs = run.jobs()
        assert [j for j in jobs if j.state != "finished"] == []  # each dispatched job finished, once
        attempts = {
            j.id: [
                json.loads(line) for line in (run.log_dir(j.id) / "attempts.jsonl").read_text().splitlines()
            ]
            for j in jobs
        }
        rerun = {job: lines for job, lines in attempts.items() if any("lost" in line for line in lines)}
        assert rerun, "the killed node held no job"
        for lines in rerun.values():  # lost, then run again to an end on a live node
            assert lines[0]["lost"].startswith("worker lost: ")
            assert "where" in lines[-1]
        assert len({line["where"] for lines in attempts.values() for line in lines if "where" in line}) == 2

        evaluations = run.evaluations()
        assert len(evaluations) == sum(j.kind == "evaluate" for j in jobs)  # one result per evaluation job
        assert max(Counter(e.log_path for e in evaluations).values()) == 1
        dev = [e for e in run.evaluations(split="dev") if e.outcome != "infra"]
        assert len(dev) == BUDGET
        assert max(Counter((e.node, e.task) for e in dev).values()) == 1
        assert_clades_recount(run, dev)
        assert sum(j.kind == "expand" for j in jobs) >= 2
        run_id = run.id
    assert docker_client.containers.list(all=True, filters={"label": f"evolve.run={run_id}"}) == []
