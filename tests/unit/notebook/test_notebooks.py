"""The notebooks run top to bottom (nbclient) and fail on any cell error."""

import json
import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from evolve.archive import import_dgm_run
from evolve.notebook import RUN_ENV

NOTEBOOKS = Path(__file__).resolve().parents[3] / "notebooks"
FIXTURES = Path(__file__).resolve().parents[3] / "archive" / "published" / "fixtures"


KERNEL = "evolve-tests"


@pytest.fixture(autouse=True)
def kernel_of_this_python(tmp_path_factory, monkeypatch):
    """A kernelspec running this interpreter: an installed `python3` spec may name another `python`."""
    root = tmp_path_factory.getbasetemp() / "jupyter"
    spec = root / "kernels" / KERNEL / "kernel.json"
    spec.parent.mkdir(parents=True, exist_ok=True)
    argv = [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    spec.write_text(json.dumps({"argv": argv, "display_name": KERNEL, "language": "python"}))
    monkeypatch.setenv("JUPYTER_PATH", str(root))


def execute(name: str) -> nbformat.NotebookNode:
    book = nbformat.read(NOTEBOOKS / name, as_version=4)
    client = NotebookClient(
        book, timeout=120, kernel_name=KERNEL, resources={"metadata": {"path": str(NOTEBOOKS)}}
    )
    client.execute()  # raises CellExecutionError on the first failing cell
    return book


def outputs(book, kind: str) -> list:
    return [o for cell in book.cells for o in cell.get("outputs", []) if kind in o.get("data", {})]


def text(book) -> str:
    return "".join(o.get("text", "") for cell in book.cells for o in cell.get("outputs", []))


def test_browse_archive_runs_on_the_default_run(monkeypatch):
    monkeypatch.delenv(RUN_ENV, raising=False)
    book = execute("browse_archive.ipynb")
    assert len(outputs(book, "image/png")) == 4  # tree, progress, outcomes, usage
    assert outputs(book, "text/markdown")  # diffs
    assert "best-belief node" in text(book)
    # The published run's best belief is its seed: the walk follows the top-ranked edit instead, and
    # the ranking covers every edit with its clade change and instructions.
    assert "walking the lineage of the best belief is the root 0, so the child of the top-ranked edit, 2" in text(book)
    assert "largest gain: 1 -> 2: clade estimate 0.50 -> 0.50 (+0.00, 2 results in its clade)" in text(book)
    assert "largest loss: 0 -> 1: clade estimate 0.58 -> 0.50 (-0.08, 6 results in its clade)" in text(book)
    assert "instructions: Problem:" in text(book)


def test_browse_archive_runs_on_an_imported_dgm_run(monkeypatch, tmp_path):
    report = import_dgm_run(FIXTURES / "dgm" / "run", FIXTURES / "dgm" / "initial-code", tmp_path / "dgm")
    report.run.close()
    monkeypatch.setenv(RUN_ENV, str(tmp_path / "dgm"))
    book = execute("browse_archive.ipynb")
    assert f"source: {tmp_path / 'dgm'}" in text(book)
    assert "walking the lineage of the best-belief node 20250101_000002_000001" in text(book)
    assert "largest gain: 20250101_000002_000002 -> 20250101_000003_000001" in text(book)
    assert "6 nodes (3 invalid), 14 evaluations" in text(book)


@pytest.mark.parametrize("budget", ["60"])
def test_compare_policies_runs(monkeypatch, budget):
    monkeypatch.setenv("EVOLVE_NOTEBOOK_BUDGET", budget)
    monkeypatch.setenv("EVOLVE_NOTEBOOK_SEEDS", "2")
    book = execute("compare_policies.ipynb")
    assert len(outputs(book, "image/png")) == 3
    assert f"budget {budget} evaluations" in text(book)
