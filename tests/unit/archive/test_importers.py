import json
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from evolve.archive import Run, import_dgm_run, import_hgm_run
from evolve.archive.importers import load_concatenated_json
from evolve.errors import EvolveError

FIXTURES = Path(__file__).resolve().parents[3] / "archive" / "published" / "fixtures"
DGM_RUN, DGM_CODE = FIXTURES / "dgm" / "run", FIXTURES / "dgm" / "initial-code"
HGM_RUN = FIXTURES / "hgm" / "run"
A, B, C, D, E = (
    "20250101_000001_000001",
    "20250101_000002_000001",
    "20250101_000002_000002",
    "20250101_000003_000001",
    "20250101_000003_000002",
)


def files(directory: Path) -> dict[str, str]:
    return {str(p.relative_to(directory)): p.read_text() for p in sorted(directory.rglob("*")) if p.is_file()}


def counts(run: Run) -> dict[str, Counter]:
    found: dict[str, Counter] = {node.id: Counter() for node in run.nodes()}
    for evaluation in run.evaluations():
        found[evaluation.node][evaluation.outcome] += 1
    return found


@pytest.fixture
def dgm(tmp_path):
    report = import_dgm_run(DGM_RUN, DGM_CODE, tmp_path / "dgm")
    with report.run:
        yield report


@pytest.fixture
def hgm(tmp_path):
    report = import_hgm_run(HGM_RUN, None, tmp_path / "hgm")
    with report.run:
        yield report


def test_concatenated_json_reads_multiline_objects_and_infinity():
    entries = load_concatenated_json(HGM_RUN / "hgm_metadata.jsonl")
    assert [len(e["nodes"]) for e in entries] == [1, 3, 4]
    assert entries[-1]["nodes"][2]["mean_utility"] == float("inf")
    assert [g["generation"] for g in load_concatenated_json(DGM_RUN / "dgm_metadata.jsonl")] == [0, 1]


def test_dgm_nodes_parentage_and_validity(dgm):
    nodes = {n.id: n for n in dgm.run.nodes()}
    assert dgm.nodes == len(nodes) == 6
    assert {n: nodes[n].parent for n in nodes} == {
        "initial": None,
        A: "initial",
        B: A,
        C: "initial",
        D: C,
        E: A,
    }
    assert {n for n in nodes if nodes[n].valid} == {"initial", A, B}
    assert "does not apply" in nodes[C].reason
    assert nodes[D].reason == f"parent {C} could not be rebuilt"
    assert "overall_performance" in nodes[E].reason
    assert nodes[A].instructions == "Retry empty edits."
    assert nodes[A].origin == f"dgm:{A}"


def test_dgm_pass_counts_follow_overall_performance(dgm):
    found = counts(dgm.run)
    assert found["initial"] == Counter({"pass": 1, "fail": 2, "error": 1})
    assert found[A] == Counter({"pass": 2, "fail": 1, "error": 1})
    assert found[B] == Counter({"pass": 3, "fail": 1})
    assert found[E] == Counter()
    assert dgm.evaluations == len(dgm.run.evaluations()) == 14
    tree = dgm.run.tree()
    assert (tree.own_counts(B).successes, tree.own_counts(B).failures) == (3, 1)
    assert tree.clade_counts(A).successes == 5


def test_dgm_code_is_the_patch_chain_applied_to_the_initial_code(dgm, tmp_path):
    root = files(dgm.run.checkout("initial", tmp_path / "root"))
    assert root == files(DGM_CODE)
    grandchild = files(dgm.run.checkout(B, tmp_path / "b"))
    assert "for _ in range(3):" in grandchild["coding_agent.py"]  # A's patch
    assert "def grep" in grandchild["tools/search.py"]  # B's own patch
    assert set(grandchild) == set(root) | {"tools/search.py"}
    # The broken node keeps its parent's code, unchanged.
    assert files(dgm.run.checkout(C, tmp_path / "c")) == root


def test_broken_patches_are_reported_with_their_node_ids(dgm, hgm):
    assert [p.node for p in dgm.problems] == [C, D]
    assert "README.md" in dgm.problems[0].reason
    assert [p.node for p in hgm.problems] == [D]


def test_hgm_tree_ids_outcomes_and_failed_children(hgm, tmp_path):
    nodes = {n.id: n for n in hgm.run.nodes()}
    assert {n: nodes[n].parent for n in nodes} == {
        "initial": None,
        A: "initial",
        B: A,
        C: "initial",
        D: A,
        E: A,
    }
    assert nodes[B].origin == f"hgm:{B}#2"
    assert not nodes[E].valid and "sample_child" in nodes[E].reason
    assert nodes[C].valid
    found = counts(hgm.run)
    assert found["initial"] == Counter({"pass": 1, "fail": 2})
    # B: t1 resolved, t2 empty patch, t5 submitted but unclassified.
    assert found[B] == Counter({"pass": 1, "error": 2})
    assert sorted(e.task for e in hgm.run.evaluations(B)) == ["t1", "t2", "t5"]
    assert found[C] == Counter()
    code = files(hgm.run.checkout(C, tmp_path / "c"))
    assert "def insert" in code["tools/edit.py"]


def test_missing_parent_directory_is_reported_not_dropped(tmp_path):
    run_dir = shutil.copytree(DGM_RUN, tmp_path / "src")
    shutil.rmtree(run_dir / A)
    report = import_dgm_run(run_dir, DGM_CODE, tmp_path / "out")
    with report.run:
        reported = {p.node for p in report.problems}
        assert {B, E} <= reported
        assert {n.id for n in report.run.nodes()} == {"initial", C, D}


def test_not_a_run_directory_is_an_error(tmp_path):
    with pytest.raises(EvolveError, match="initial/metadata.json"):
        import_dgm_run(tmp_path, DGM_CODE, tmp_path / "out")


def test_cli_import_from_dgm_prints_problems(tmp_path):
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "evolve",
            "import",
            "--from",
            "dgm",
            str(DGM_RUN),
            "--initial-code",
            str(DGM_CODE),
            "--dest",
            str(tmp_path / "run"),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    assert "imported 6 nodes (3 invalid) and 14 evaluations" in out.stdout
    assert f"node {C}: model_patch.diff does not apply" in out.stdout
    with Run.open(tmp_path / "run") as run:
        assert json.loads(run.meta("imported_from"))["format"] == "dgm"


@pytest.mark.parametrize("target", ["/etc/hostname", "/etc", "../../outside"])
def test_a_symlink_out_of_the_initial_code_is_refused_and_nothing_is_left(tmp_path, target):
    code = shutil.copytree(DGM_CODE, tmp_path / "code")
    (code / "leak").symlink_to(target)
    with pytest.raises(EvolveError, match="symbolic link out of the tree"):
        import_dgm_run(DGM_RUN, code, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_a_symlink_inside_the_initial_code_is_kept_as_a_link(tmp_path):
    code = shutil.copytree(DGM_CODE, tmp_path / "code")
    first = min(p for p in code.rglob("*") if p.is_file())
    (code / "alias").symlink_to(first.relative_to(code))
    report = import_dgm_run(DGM_RUN, code, tmp_path / "out")
    with report.run:
        out = report.run.code.checkout(report.run.node("initial").commit, tmp_path / "checkout")
    assert (out / "alias").is_symlink() and str((out / "alias").readlink()) == str(first.relative_to(code))


def test_a_failed_import_leaves_nothing_at_dest(tmp_path, monkeypatch):
    from evolve.archive import importers

    def boom(*args, **kwargs):
        raise OSError("disk on fire")

    monkeypatch.setattr(importers, "_record_performance", boom)
    with pytest.raises(OSError, match="disk on fire"):
        import_dgm_run(DGM_RUN, DGM_CODE, tmp_path / "out")
    assert not (tmp_path / "out").exists()
    (tmp_path / "empty").mkdir()
    with pytest.raises(OSError, match="disk on fire"):
        import_dgm_run(DGM_RUN, DGM_CODE, tmp_path / "empty")
    assert list((tmp_path / "empty").iterdir()) == []
