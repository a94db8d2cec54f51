"""`evolve bench archive`: how long the archive's views take on a long run's archive.

A synthetic run of `nodes` nodes (a random tree, each node a real commit in the run's git store,
written by one `git fast-import`) and `evaluations` evaluations (spread evenly over the nodes, each
node with its own pass probability), in the real schema, written by plain SQL inserts (building it is
not what is measured). Then each view is timed: `nodes_frame`, `evaluations_frame`, the notebooks'
`load_run`, and `evolve status`, `evolve tree` and `evolve report` as the user runs them (a fresh process
each: wall time, CPU time and peak resident memory of that process). CPU time is printed beside wall
time because a shared machine stretches wall time: CPU time is what the view itself costs.
"""

from __future__ import annotations

import os
import random
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

import evolve
from evolve.archive.store import Run
from evolve.config import RunConfig, RunSection

TARGETS_S = {"frames": 3.0, "load_run": 5.0, "status": 2.0, "tree": 2.0, "report": 30.0}
"""The archive views' time targets on 2 cores (status and tree also under 300 MB)."""
TARGET_MB = 300.0


@dataclass(frozen=True)
class CliTiming:
    seconds: float
    peak_mb: float
    cpu_s: float = 0.0


@dataclass(frozen=True)
class Timing:
    seconds: float
    cpu_s: float


@dataclass(frozen=True)
class ArchiveBench:
    nodes: int
    evaluations: int
    build_s: float
    nodes_frame_s: float
    evaluations_frame_s: float
    load_run_s: float
    status: CliTiming
    tree: CliTiming
    report: CliTiming
    cpu_s: dict[str, float]
    """CPU seconds of the in-process views (nodes_frame, evaluations_frame, load_run)."""

    def to_json(self) -> dict:
        return {
            **asdict(self),
            "frames_s": self.nodes_frame_s + self.evaluations_frame_s,
            "targets_s": TARGETS_S,
            "target_mb": TARGET_MB,
        }


def _commits(run: Run, parents: list[int]) -> list[str]:
    """One commit per node (`agent.py` differs), each on its parent's commit; refs/nodes/<id> set."""
    script = []
    for node, parent in enumerate(parents):
        text = f"VERSION = {node}\n".encode()
        script.append(b"blob\nmark :%d\ndata %d\n%s\n" % (2 * node + 1, len(text), text))
        source = b"" if parent < 0 else b"from :%d\n" % (2 * parent + 2)
        script.append(
            b"commit refs/nodes/%d\nmark :%d\ncommitter evolve <evolve@localhost> 0 +0000\n"
            b"data 0\n%sM 100644 :%d agent.py\n\n" % (node, 2 * node + 2, source, 2 * node + 1)
        )
    marks = run.path / "bench-marks"
    subprocess.run(
        ["git", f"--git-dir={run.code.path}", "fast-import", "--quiet", f"--export-marks={marks}"],
        input=b"".join(script),
        check=True,
        capture_output=True,
    )
    by_mark = dict(line.split() for line in marks.read_text().splitlines())
    marks.unlink()
    return [by_mark[f":{2 * node + 2}"] for node in range(len(parents))]


def build_archive(path: Path, nodes: int, evaluations: int, seed: int = 0) -> Path:
    """Write the synthetic run at `path` (see the module docstring)."""
    rng = random.Random(seed)
    parents = [-1] + [rng.randrange(node) for node in range(1, nodes)]
    with Run.create(path, RunConfig(run=RunSection(name="bench-archive", seed=seed))) as run:
        commits = _commits(run, parents)
    connection = sqlite3.connect(path / "run.sqlite", isolation_level=None)
    try:
        connection.execute("BEGIN")
        connection.executemany(
            "INSERT INTO nodes (id, parent, commit_sha, created, origin, status) VALUES (?, ?, ?, ?, ?, ?)",
            (
                (
                    str(n),
                    None if p < 0 else str(p),
                    commits[n],
                    1.8e9 + n,
                    "self_modify" if p >= 0 else "seed",
                    "invalid" if n and rng.random() < 0.05 else "valid",
                )
                for n, p in enumerate(parents)
            ),
        )
        per_node = max(1, evaluations // nodes)
        rate = [rng.random() for _ in range(nodes)]
        outcomes = ("pass", "fail")
        connection.executemany(
            "INSERT INTO evaluations (node, task, split, attempt, outcome, duration_s, tokens, log_path, "
            "created)"
            " VALUES (?, ?, ?, 1, ?, ?, ?, ?, ?)",
            (
                (
                    str(i // per_node),
                    f"task-{i % per_node}",
                    "dev",
                    outcomes[rng.random() >= rate[i // per_node]],
                    1.0,
                    100,
                    f"logs/job-{i}",
                    1.8e9 + i,
                )
                for i in range(min(evaluations, per_node * nodes))
            ),
        )
        connection.execute("UPDATE counters SET value = ? WHERE name = 'node'", (nodes,))
        connection.execute("COMMIT")
    finally:
        connection.close()
    return path


def _timed(call: Callable[[], object]) -> Timing:
    start, cpu = time.perf_counter(), time.process_time()
    call()
    return Timing(time.perf_counter() - start, time.process_time() - cpu)


# The peak is the process's own high-water mark (VmHWM), written when it exits: `ru_maxrss` of a child
# counts the memory of the parent it was forked from (this bench, holding a million-row frame).
# `python -c` puts the working directory first on the import path: a folder holding a directory named
# `evolve` would shadow the package, so the first entry becomes the folder this evolve is imported from.
_PEAK = """import atexit, runpy, sys
sys.path[0] = sys.argv.pop(1)
out = sys.argv.pop(1)
def peak():
    with open("/proc/self/status") as status, open(out, "w") as f:
        f.write(next(line.split()[1] for line in status if line.startswith("VmHWM:")))
atexit.register(peak)
sys.argv[0] = "evolve"
runpy.run_module("evolve", run_name="__main__", alter_sys=True)
"""


def _cli(*args: str) -> CliTiming:
    """Wall time, CPU time and peak RSS of `evolve ARGS` in a fresh process."""
    with tempfile.TemporaryDirectory(prefix="evolve-bench-peak-") as tmp:
        peak = Path(tmp) / "peak"
        start = time.perf_counter()
        home = str(Path(evolve.__file__).resolve().parents[1])  # the evolve this bench runs, not the cwd's
        process = subprocess.Popen(
            [sys.executable, "-c", _PEAK, home, str(peak), *args],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        _, status, usage = os.wait4(process.pid, 0)
        seconds = time.perf_counter() - start
        process.returncode = os.waitstatus_to_exitcode(status)
        if process.returncode != 0:
            raise RuntimeError(
                f"evolve {' '.join(args)} exited {process.returncode}: "
                f"{process.stderr.read().decode() if process.stderr else ''}"
            )
        if process.stderr is not None:
            process.stderr.close()
        return CliTiming(seconds, int(peak.read_text()) / 1024, usage.ru_utime + usage.ru_stime)  # VmHWM: KiB


def bench_archive(
    path: Path, nodes: int = 10_000, evaluations: int = 1_000_000, seed: int = 0
) -> ArchiveBench:
    """Build the archive at `path` (unless it holds one already) and time each view on it."""
    from evolve.archive.frames import evaluations_frame, nodes_frame
    from evolve.notebook import load_run

    start = time.perf_counter()
    if not (path / "run.sqlite").exists():  # `--keep DIR` of an earlier bench: time its views again
        build_archive(path, nodes, evaluations, seed)
    build_s = time.perf_counter() - start
    with Run.open(path) as run:
        nodes_s = _timed(lambda: nodes_frame(run))
        evaluations_s = _timed(lambda: evaluations_frame(run))
    loaded: list = []
    load_s = _timed(lambda: loaded.append(load_run(path)))
    loaded[0].close()
    with tempfile.TemporaryDirectory(prefix="evolve-bench-report-") as tmp:
        report = _cli("report", str(path), "-o", str(Path(tmp) / "report.html"))
    return ArchiveBench(
        nodes,
        evaluations,
        build_s,
        nodes_s.seconds,
        evaluations_s.seconds,
        load_s.seconds,
        _cli("status", str(path)),
        _cli("tree", str(path)),
        report,
        {"nodes_frame": nodes_s.cpu_s, "evaluations_frame": evaluations_s.cpu_s, "load_run": load_s.cpu_s},
    )
