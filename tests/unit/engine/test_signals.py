"""SIGTERM and SIGHUP cancel like a second Ctrl-C; the exit status is 128 + the signal."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from evolve.archive import Run

SCRIPT = Path(__file__).with_name("signal_run.py")


def _started(run_path: Path) -> int:
    if not (run_path / "writer.lock").exists() or not (run_path / "run.sqlite").exists():
        return 0
    with Run.open(run_path) as run:
        return len(run.jobs("started"))


def _run_until_busy(run_path: Path) -> subprocess.Popen:
    process = subprocess.Popen(
        [sys.executable, str(SCRIPT), str(run_path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 30
    while _started(run_path) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert process.poll() is None, process.stderr.read()
    return process


@pytest.mark.parametrize(
    ("signals", "status"),
    [
        ((signal.SIGTERM,), 143),
        ((signal.SIGHUP,), 129),
        ((signal.SIGINT, signal.SIGINT), 130),
        ((signal.SIGINT, signal.SIGTERM), 143),
    ],
    ids=["term", "hup", "int-int", "int-term"],
)
def test_a_cancelling_signal_marks_the_jobs_and_exits_128_plus_it(tmp_path, signals, status):
    run_path = tmp_path / "run"
    process = _run_until_busy(run_path)
    for number in signals:
        process.send_signal(number)
        time.sleep(0.05)
    out, err = process.communicate(timeout=20)
    assert process.returncode == status, err
    assert "stopped: cancelled; worker cancelled: True" in out
    with Run.open(run_path) as run:
        assert not run.jobs("started")
        assert [j for j in run.jobs("cancelled") if j.detail == "cancelled by the user"]
        assert not run.evaluations(split="heldout")


def test_one_ctrl_c_lets_the_jobs_in_flight_finish_and_exits_130(tmp_path):
    run_path = tmp_path / "run"
    process = _run_until_busy(run_path)
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=20)
    assert process.returncode == 130, err
    assert "stopped: stop requested; worker cancelled: False" in out
    with Run.open(run_path) as run:
        assert not run.jobs("started") and not run.jobs("cancelled")
        # Recorded when it happened: a report written later says why, not "not recorded".
        from evolve.archive.stops import recorded_stop
        from evolve.report.data import infer_stop_reason

        assert recorded_stop(run) == "stop requested"
        assert infer_stop_reason(run, run.tree(), run.nodes()) == "stop requested"


def test_a_session_clears_the_last_stop_and_a_killed_one_says_so(run):
    from evolve.archive.stops import record_stop, recorded_stop
    from evolve.archive.vocab import StopReason

    assert recorded_stop(run) is None  # never recorded (an older or imported run): the report infers it
    record_stop(run, StopReason.EVALUATION_BUDGET, "evaluation budget spent (8/8)")
    assert recorded_stop(run) == "evaluation budget spent (8/8)"
    record_stop(run, None)  # a session starts
    assert recorded_stop(run).startswith("running, or its process was killed")
