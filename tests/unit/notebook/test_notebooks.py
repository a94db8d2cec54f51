"""The notebooks run top to bottom (nbclient) and fail on any cell error."""

import json
import re
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
    assert len(outputs(book, "image/png")) == 5  # tree, progress, outcomes, usage; best-so-far and its cost
    tables = [o["data"]["text/plain"] for o in outputs(book, "text/plain")]
    improvements = [table for table in tables if "spent_cpu_hours" in table]
    first = improvements[0].split("\n")[1].split()  # the table's first row: index, node, ...
    assert len(improvements) == 1 and first[1] == "1"  # node 1 took the lead first
    assert outputs(book, "text/markdown")  # diffs
    # The most informative published run, not the 4-node quickstart: its best node is the one
    # `evolve status`, `evolve tree` and the report name (tests/unit/archive/test_best.py).
    assert "source: " in text(book) and "humaneval-cpu.evolve.tar.gz" in text(book)
    assert "13 nodes (3 invalid), 214 evaluations, best-belief node: 4" in text(book)
    assert "walking the lineage of the best-belief node 4" in text(book)
    assert "largest gain: 3 -> 4: clade estimate 0.64 -> 0.70 (+0.07, 74 results in its clade)" in text(book)
    assert "largest loss: 4 -> 10: clade estimate 0.70 -> 0.00 (-0.70, 1 results in its clade)" in text(book)
    assert "instructions: Problem:" in text(book)


def test_the_notebooks_cite_only_pages_the_repository_holds():
    root = NOTEBOOKS.parent
    for book in NOTEBOOKS.glob("*.ipynb"):
        source = book.read_text()
        assert "DESIGN" + ".md" not in source, book.name
        for page in re.findall(r"docs/[\w/-]+\.md", source):
            assert (root / page).is_file(), (book.name, page)


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


def test_compare_policies_at_its_default_size_tells_the_policies_apart(monkeypatch):
    """The default the notebook opens with (800 evaluations, 6 worlds): the policies' final agents differ
    (at 200 evaluations four of five named the seed, 0.347 each)."""
    monkeypatch.delenv("EVOLVE_NOTEBOOK_BUDGET", raising=False)
    monkeypatch.delenv("EVOLVE_NOTEBOOK_SEEDS", raising=False)
    book = execute("compare_policies.ipynb")
    assert "5 policies x 6 worlds, budget 800 evaluations" in text(book)
    table = next(
        o["data"]["text/plain"]
        for o in outputs(book, "text/plain")
        if "dgm_improved" in o["data"]["text/plain"]
    )
    finals = {}
    for line in table.splitlines():  # the first block of a wrapped frame starts with the `final` column
        words = line.split()
        if words and words[0] in ("hgm", "dgm", "gea", "greedy", "random"):
            finals.setdefault(words[0], float(words[1]))
    assert len(finals) == 5 and len({round(f, 3) for f in finals.values()}) == 5, finals  # no two identical
