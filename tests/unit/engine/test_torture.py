"""SIGKILL the real Runner (scripted worker) at random moments, held-out scoring included, resume to
the end, and check the archive's invariants. A few seeds, bounded in time (about 10 s a seed)."""

from __future__ import annotations

import random
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from evolve.archive import Run
from tests.unit.engine.torture_run import BUDGET, HELDOUT, SEARCH

SCRIPT = Path(__file__).with_name("torture_run.py")


def _jobs(run_path: Path) -> list[tuple[str | None, str]]:
    """(split, state) of every job row, read without a lock or a write (mid-run, any moment)."""
    if not (run_path / "run.sqlite").exists():
        return []
    try:
        db = sqlite3.connect(f"{(run_path / 'run.sqlite').as_uri()}?mode=ro", uri=True, timeout=5)
        try:
            return db.execute("SELECT split, state FROM jobs").fetchall()
        finally:
            db.close()
    except sqlite3.OperationalError:  # created but not yet written: no jobs table to read yet
        return []


def _start(run_path: Path, seed: int, concurrency: int) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, str(SCRIPT), str(run_path), str(seed), str(concurrency), "0.05"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _kill_somewhere(process: subprocess.Popen, run_path: Path, rng: random.Random, heldout: bool) -> bool:
    """Kill `process` after a random number of new jobs, or a random way into held-out scoring;
    False when it ended on its own first."""
    before = _jobs(run_path)
    seen = sum(split == "heldout" for split, _ in before) if heldout else len(before)
    target = rng.randint(1, 2) if heldout else rng.randint(1, 6)
    deadline = time.monotonic() + 20
    while process.poll() is None and time.monotonic() < deadline:
        jobs = _jobs(run_path)
        count = (sum(split == "heldout" for split, _ in jobs) if heldout else len(jobs)) - seen
        if count >= target:
            break
        time.sleep(rng.uniform(0.0, 0.01))
    if process.poll() is not None:
        assert process.returncode == 0, process.stderr.read()
        return False
    process.send_signal(signal.SIGKILL)
    process.wait()
    return True


def check_invariants(run_path: Path) -> None:
    with Run.open(run_path) as run:
        nodes = run.nodes()
        assert run.code.refs().keys() == {n.id for n in nodes}, "one ref per node, none without a row"
        jobs = run.jobs()
        assert not [j for j in jobs if j.state == "started"], "no job left started"
        requeued = [j.requeue_of for j in jobs if j.requeue_of is not None]
        assert len(requeued) == len(set(requeued)), "an interrupted job re-run once at most"
        for job in jobs:
            if job.requeue_of is not None:
                old = jobs[job.requeue_of - 1]
                assert (old.kind, old.node, old.task, old.split, old.decision) == (
                    job.kind,
                    job.node,
                    job.task,
                    job.split,
                    job.decision,
                )
        dev = [e for e in run.evaluations(split="dev") if e.outcome != "infra"]
        assert max(Counter((e.node, e.task) for e in dev).values()) == 1, "a (node, task) counted twice"
        assert {e.task for e in dev} <= set(SEARCH), "a held-out task in the search split"
        assert len(dev) == BUDGET.evaluations, "the evaluation budget kept exactly"
        heldout = [e for e in run.evaluations(split="heldout") if e.outcome != "infra"]
        assert sorted(e.task for e in heldout) == sorted(HELDOUT), "each held-out task scored once"
        assert len({e.node for e in heldout}) == 1
        tree = run.tree()
        for node in nodes:
            members = {node.id, *tree.descendants(node.id)}
            assert tree.clade_counts(node.id).total == sum(e.node in members for e in dev)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_sigkill_anywhere_then_resume_keeps_the_archive_consistent(tmp_path, seed):
    rng = random.Random(seed)
    run_path = tmp_path / "run"
    kills = 0
    # random moments: the first in the search, the last ones a random way into held-out scoring
    while kills < 6 and _kill_somewhere(
        _start(run_path, seed, 3), run_path, rng, kills >= 2 or (kills == 1 and rng.random() < 0.5)
    ):
        kills += 1
    final = _start(run_path, seed, 3)
    out, err = final.communicate(timeout=60)
    assert final.returncode == 0, err
    assert "evaluation budget spent (24/24)" in out and "scored=True" in out
    assert kills >= 2
    check_invariants(run_path)
    with Run.open(run_path) as run:
        assert [j for j in run.jobs() if j.split == "heldout" and j.requeue_of], (
            "no kill hit held-out scoring"
        )


def _decisions(run_path: Path) -> tuple[list, list, list]:
    with Run.open(run_path) as run:
        nodes = [(n.id, n.parent, n.status, n.instructions) for n in run.nodes()]
        dev = [(e.node, e.task, e.outcome) for e in run.evaluations(split="dev")]
        heldout = sorted((e.node, e.task, e.outcome) for e in run.evaluations(split="heldout"))
    return nodes, dev, heldout


def test_a_resumed_run_at_concurrency_1_decides_as_an_uninterrupted_one(tmp_path):
    whole = _start(tmp_path / "whole", 4, 1)
    assert whole.wait(timeout=60) == 0, whole.stderr.read()
    rng = random.Random(4)
    run_path = tmp_path / "killed"
    kills = 0
    while kills < 4 and _kill_somewhere(_start(run_path, 4, 1), run_path, rng, kills == 3):
        kills += 1
    final = _start(run_path, 4, 1)
    assert final.wait(timeout=60) == 0, final.stderr.read()
    assert kills >= 2
    assert _decisions(run_path) == _decisions(tmp_path / "whole")
