"""A run that hits a full disk stops cleanly (work cancelled, jobs marked) and resumes once space is back."""

from __future__ import annotations

import errno
import shutil
import sqlite3
import subprocess
from collections import Counter
from pathlib import Path

import git
import pytest

from evolve.config import BudgetConfig
from tests.unit.engine.conftest import HELDOUT, seeded_run


class DiskFills:
    """Wraps one of the run's write paths: the `after`-th call and every one after it fail as on a full
    disk."""

    def __init__(self, target, after: int, error: BaseException) -> None:
        self.target, self.after, self.error, self.calls, self.full = target, after, error, 0, True

    def __call__(self, *args, **kwargs):
        self.calls += 1
        if self.full and self.calls >= self.after:
            raise self.error
        return self.target(*args, **kwargs)


FAULTS = {
    "git": lambda: git.GitCommandError(["git", "commit-tree"], 128, "error: unable to write file objects/ab"),
    "sqlite": lambda: sqlite3.OperationalError("database or disk is full"),
    "logs": lambda: OSError(errno.ENOSPC, "No space left on device", "logs/job-9"),
}


@pytest.mark.parametrize("where", ["git", "sqlite", "logs"])
def test_a_full_disk_stops_the_run_cleanly_and_a_resume_finishes_it(make_runner, monkeypatch, where):
    runner, run, worker = make_runner(BudgetConfig(evaluations=20), concurrency=3, delay_s=0.02)
    if where == "git":
        fault = DiskFills(run.code.commit_dir, 2, FAULTS[where]())
        monkeypatch.setattr(run.code, "commit_dir", fault)
    elif where == "sqlite":
        fault = DiskFills(run.record_evaluation, 6, FAULTS[where]())
        monkeypatch.setattr(run, "record_evaluation", fault)
    else:
        fault = DiskFills(run.log_dir, 4, FAULTS[where]())
        monkeypatch.setattr(run, "log_dir", fault)
    with pytest.raises(type(FAULTS[where]())):
        runner.execute()
    assert worker.cancelled.is_set(), "the work in flight was cancelled (its sandboxes removed)"
    assert not run.jobs("started"), "the jobs in flight were marked"
    assert run.code.refs().keys() == {n.id for n in run.nodes()}

    fault.full = False  # space freed
    resumed, _, _ = make_runner(BudgetConfig(evaluations=20), run=run, concurrency=3)
    outcome = resumed.execute()
    assert outcome.stop_reason == "evaluation budget spent (20/20)" and outcome.heldout_scored
    dev = [e for e in run.evaluations(split="dev") if e.outcome != "infra"]
    assert len(dev) == 20 and max(Counter((e.node, e.task) for e in dev).values()) == 1
    assert sorted(e.task for e in run.evaluations(split="heldout")) == sorted(HELDOUT)
    assert not run.jobs("started")


@pytest.fixture
def small_disk(tmp_path):
    """A 3 MiB tmpfs (a real disk that fills up); skipped where mounting is not allowed."""
    target = tmp_path / "disk"
    target.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", target],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here: {done.stderr.strip()}")
    yield target
    subprocess.run(["umount", "-l", target], capture_output=True, check=False)


def _fill(disk: Path, leave: int) -> Path:
    filler = disk / "filler"
    free = shutil.disk_usage(disk).free
    filler.write_bytes(b"\0" * max(free - leave, 0))
    return filler


def test_a_real_full_disk_stops_the_run_in_one_line_and_a_resume_after_freeing_space_finishes_it(
    make_runner, small_disk
):
    from evolve.archive import Run
    from evolve.cli.faults import describe

    run = seeded_run(small_disk / "run")
    runner, run, worker = make_runner(BudgetConfig(evaluations=30), run=run, concurrency=2)
    filler = _fill(small_disk, 48 * 1024)
    with pytest.raises((OSError, sqlite3.Error, git.GitCommandError)) as raised:
        runner.execute()
    line = describe(raised.value)
    assert line is not None and ("space" in line or "full" in line), line
    assert str(small_disk / "run") in line, line  # names the path
    assert worker.cancelled.is_set()
    run.close()

    filler.unlink()  # space freed
    with Run.open(small_disk / "run", writer=True) as reopened:
        resumed, _, _ = make_runner(BudgetConfig(evaluations=30), run=reopened, concurrency=2)
        assert resumed.execute().stop_reason == "evaluation budget spent (30/30)"
        dev = [e for e in reopened.evaluations(split="dev") if e.outcome != "infra"]
        assert len(dev) == 30 and max(Counter((e.node, e.task) for e in dev).values()) == 1
        assert not reopened.jobs("started")
        assert reopened.code.refs().keys() == {n.id for n in reopened.nodes()}
