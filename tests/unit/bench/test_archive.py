"""`evolve bench archive` on a small synthetic run: the archive is a real run and every view is timed."""

import json
import subprocess
import sys

from evolve.archive import Run
from evolve.bench.archive import build_archive


def test_the_synthetic_archive_is_a_real_run(tmp_path):
    build_archive(tmp_path / "run", nodes=50, evaluations=500, seed=3)
    with Run.open(tmp_path / "run") as run:
        nodes = run.nodes()
        assert len(nodes) == 50 and len(run.evaluations()) == 500
        assert nodes[0].parent is None and all(n.parent is not None for n in nodes[1:])
        assert "VERSION = 7" in run.diff("7")  # each node is a real commit on its parent's
        assert run.tree().clade_counts("0").total == 500


def test_the_bench_command_prints_every_view_timing(tmp_path):
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "evolve",
            "bench",
            "archive",
            "--nodes",
            "40",
            "--evaluations",
            "400",
            "--json",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert (result["nodes"], result["evaluations"]) == (40, 400)
    for key in ("nodes_frame_s", "evaluations_frame_s", "load_run_s", "frames_s"):
        assert result[key] > 0
    assert set(result["cpu_s"]) == {"nodes_frame", "evaluations_frame", "load_run"}
    for view in ("status", "tree", "report"):
        assert result[view]["seconds"] > 0 and result[view]["cpu_s"] > 0 and result[view]["peak_mb"] > 10


def test_the_views_are_timed_from_a_folder_holding_a_directory_named_evolve(tmp_path, monkeypatch):
    """`python -c` puts the working directory first on the import path; a stray `evolve/` there must
    not shadow the package the bench runs."""
    from evolve.bench.archive import _cli

    (tmp_path / "evolve").mkdir()
    (tmp_path / "evolve" / "__init__.py").write_text("raise ImportError('the wrong evolve')\n")
    build_archive(tmp_path / "run", nodes=5, evaluations=20, seed=1)
    monkeypatch.chdir(tmp_path)
    timing = _cli("status", str(tmp_path / "run"))
    assert timing.seconds > 0 and timing.peak_mb > 10
