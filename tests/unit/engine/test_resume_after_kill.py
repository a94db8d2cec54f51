"""SIGKILL the runner midway, resume, and find nothing lost and nothing finished run twice."""

import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from evolve.archive import Run

SCRIPT = Path(__file__).with_name("killable_run.py")


def test_resume_after_sigkill(tmp_path):
    run_path = tmp_path / "run"
    runner = subprocess.Popen([sys.executable, str(SCRIPT), str(run_path), "0.15"])
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        time.sleep(0.2)
        if (run_path / "run.sqlite").exists():
            with Run.open(run_path) as run:
                if len(run.evaluations()) >= 12:
                    break
    runner.send_signal(signal.SIGKILL)
    runner.wait()
    with Run.open(run_path) as run:
        interrupted = {j.id for j in run.jobs("started")}
        finished_before = {j.id: j for j in run.jobs("finished")}
    assert interrupted, "the kill should catch jobs in flight"

    resumed = subprocess.run(
        [sys.executable, str(SCRIPT), str(run_path), "0.0"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert resumed.returncode == 0, resumed.stderr

    with Run.open(run_path) as run:
        jobs = {j.id: j for j in run.jobs()}
        # Nothing finished was touched or run again.
        for job_id, job in finished_before.items():
            assert jobs[job_id] == job
        dev = [e for e in run.evaluations(split="dev") if e.outcome != "infra"]
        assert max(Counter((e.node, e.task) for e in dev).values()) == 1
        # Every interrupted job was re-queued exactly once and its re-run finished.
        reruns = {j.requeue_of: j for j in jobs.values() if j.requeue_of is not None}
        for job_id in interrupted:
            assert jobs[job_id].state == "cancelled" and jobs[job_id].detail == "interrupted"
            rerun = reruns[job_id]
            assert (rerun.kind, rerun.node, rerun.task, rerun.state) == (
                jobs[job_id].kind,
                jobs[job_id].node,
                jobs[job_id].task,
                "finished",
            )
        assert not run.jobs("started")
        # The budget was spent exactly (interrupted evaluations were within it), and counts add up.
        assert len(dev) == 40
        tree = run.tree()
        for node in run.nodes():
            members = [node.id] + tree.descendants(node.id)
            assert tree.clade_counts(node.id).total == sum(e.node in members for e in dev)
        assert sorted(e.task for e in run.evaluations(split="heldout")) == ["h0", "h1"]
