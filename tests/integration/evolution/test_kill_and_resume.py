"""A real evolution (Docker sandboxes, gateway, seed agent, scripted models): SIGKILL midway, resume.

Checks: no finished job re-run, no job lost, clade counts equal a recount, no container left.
"""

import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from evolve.archive import Run
from tests.integration.scripted import assert_clades_recount

ROOT = Path(__file__).resolve().parents[3]
SCRIPT = [sys.executable, "-m", "tests.integration.evolution.scripted_evolution"]
"""Run from the repository root, where `tests` imports."""


def _evaluations(run_path: Path) -> int:
    if not (run_path / "run.sqlite").exists():
        return 0
    with Run.open(run_path) as run:
        return len(run.evaluations())


def test_kill_midway_then_resume(tmp_path, docker_client):
    run_path = tmp_path / "scripted"
    first = subprocess.Popen(
        [*SCRIPT, str(tmp_path)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=ROOT
    )
    deadline = time.monotonic() + 900
    while _evaluations(run_path) < 15 and first.poll() is None and time.monotonic() < deadline:
        time.sleep(1)
    assert first.poll() is None, first.stdout.read()
    first.send_signal(signal.SIGKILL)
    first.wait()
    with Run.open(run_path) as run:
        run_id = run.id
        interrupted = {j.id for j in run.jobs("started")}
        finished_before = {j.id: j for j in run.jobs("finished")}
    assert finished_before and interrupted

    resumed = subprocess.run(
        [*SCRIPT, str(tmp_path), "--resume", str(run_path)],
        cwd=ROOT,
        check=False,
        capture_output=True,
        text=True,
        timeout=1200,
    )
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert "evaluation budget spent (40/40)" in resumed.stdout

    with Run.open(run_path) as run:
        jobs = {j.id: j for j in run.jobs()}
        for job_id, job in finished_before.items():
            assert jobs[job_id] == job  # finished before the kill: untouched, never re-run
        reruns = {j.requeue_of: j for j in jobs.values() if j.requeue_of is not None}
        for job_id in interrupted:  # started, never finished: re-run exactly once
            old = jobs[job_id]
            assert old.state == "cancelled" and job_id in reruns
            new = reruns[job_id]
            assert (new.kind, new.node, new.task, new.state) == (old.kind, old.node, old.task, "finished")
        assert not run.jobs("started")
        dev = [e for e in run.evaluations(split="dev") if e.outcome != "infra"]
        assert len(dev) == 40
        assert max(Counter((e.node, e.task) for e in dev).values()) == 1
        assert_clades_recount(run, dev)
        assert sum(j.kind == "expand" and j.state == "finished" for j in jobs.values()) >= 3
        assert len(run.evaluations(split="heldout")) == 2
    assert docker_client.containers.list(all=True, filters={"label": f"evolve.run={run_id}"}) == []
