"""A writer killed with SIGKILL mid-way leaves a run that opens consistent."""

import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from evolve.archive import Run

WRITER = Path(__file__).with_name("crash_writer.py")


def _kill_after(run_path: Path, scratch: Path, nodes_before_kill: int, extra_delay: float) -> int:
    writer = subprocess.Popen(
        [sys.executable, str(WRITER), str(run_path), str(scratch)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        for _ in range(nodes_before_kill):
            line = writer.stdout.readline()
            assert line, "the writer stopped before it was killed"
        time.sleep(extra_delay)
    finally:
        writer.send_signal(signal.SIGKILL)
        writer.wait()
    return writer.returncode


def test_sigkill_mid_write_leaves_a_consistent_run(tmp_path):
    run_path = tmp_path / "run"
    with Run.create(run_path) as run:
        seed = tmp_path / "seed"
        seed.mkdir()
        (seed / "agent.py").write_text("step = -1\n")
        run.add_node(seed)
    rng = np.random.default_rng(0)
    for round_ in range(4):
        code = _kill_after(run_path, tmp_path / f"scratch-{round_}", 3, float(rng.uniform(0, 0.15)))
        assert code == -signal.SIGKILL
        with Run.open(run_path, writer=True) as reopened:
            nodes = reopened.nodes()
            ids = {n.id for n in nodes}
            assert reopened.code.refs() == {n.id: n.commit for n in nodes}
            assert all(n.parent is None or n.parent in ids for n in nodes)
            assert all(e.node in ids for e in reopened.evaluations())
            for node in nodes:
                out = reopened.checkout(node.id, tmp_path / f"check-{round_}-{node.id}")
                assert (out / "agent.py").read_text().startswith("step = ")
    with Run.open(run_path) as final:
        assert len(final.nodes()) >= 1 + 4 * 3
