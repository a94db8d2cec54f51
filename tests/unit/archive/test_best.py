"""One "best" (evolve/archive/best.py): on every published and imported run, `evolve status`, `evolve
tree`, `evolve show`, the report, the notebooks and `evolve export` name the same node, a valid one, and
the report marks its lineage."""

from __future__ import annotations

import json
import re
import tarfile
from pathlib import Path

import pytest

from evolve.archive import Run, export_lineage, import_bundle, import_dgm_run, import_hgm_run
from evolve.archive.best import run_best
from evolve.archive.summary import render_node, render_tree, run_summary
from evolve.notebook import load_run
from evolve.report import collect, render
from evolve.search import HGMPolicy

ROOT = Path(__file__).parents[3]
PUBLISHED = ROOT / "archive" / "published"
FIXTURES = PUBLISHED / "fixtures"
V2_RUN = ROOT / "tests" / "data" / "runs" / "v2-run.tar.gz"
RUNS = [*(p.name for p in sorted(PUBLISHED.glob("*.evolve.tar.gz"))), "dgm-fixture", "hgm-fixture", "v2-run"]


def _make(name: str, tmp_path: Path) -> Path:
    dest = tmp_path / "run"
    if name == "dgm-fixture":
        import_dgm_run(FIXTURES / "dgm" / "run", FIXTURES / "dgm" / "initial-code", dest).run.close()
    elif name == "hgm-fixture":
        import_hgm_run(FIXTURES / "hgm" / "run", None, dest).run.close()
    elif name == "v2-run":
        with tarfile.open(V2_RUN) as tar:
            tar.extractall(tmp_path, filter="data")
    else:
        import_bundle(PUBLISHED / name, dest).close()
    return dest


def test_every_published_and_imported_run_is_covered():
    assert len(RUNS) >= 5 and {"quickstart-embedded.evolve.tar.gz", "humaneval-cpu.evolve.tar.gz"} <= set(
        RUNS
    )


@pytest.mark.parametrize("name", RUNS)
def test_status_tree_show_report_notebook_and_export_name_the_same_best_node(name, tmp_path):
    path = _make(name, tmp_path)
    with Run.open(path) as run:
        best = run_best(run)
        assert best is not None and run.node(best.node).valid
        status = run_summary(run)["best_node"]
        assert status["id"] == best.node and status["lineage"] == list(best.lineage)
        tree_text = render_tree(run.nodes(), run.tree(with_tasks=False), best)
        marked = [line for line in tree_text.splitlines() if line.endswith("★ best")]
        assert len(marked) == 1 and re.search(rf"(^|[─ ]){re.escape(best.node)}  own ", marked[0])
        assert (
            sum(line.endswith("· best lineage") for line in tree_text.splitlines()) == len(best.lineage) - 1
        )
        assert "best: the final agent (best)" in render_node(run, best.node)
        data = collect(run)
        assert data.best is not None and data.best.node == best.node
        assert {n.id for n in data.nodes if n.on_best_lineage} == set(best.lineage)
        page = render(data)
        assert re.search(rf'<g class="node[^"]* best" data-id="{re.escape(best.node)}"', page)
        if run.config.policy.name == "hgm":  # the rule is the policy's own: HGM's ε-quantile on the view
            assert HGMPolicy(run.config.policy.hgm).best(run.tree().view()) == best.node
        bundle = export_lineage(run, tmp_path / "again.evolve.tar.gz", with_logs=False)
        with tarfile.open(bundle) as tar:
            member = tar.extractfile("manifest.json")
            assert member is not None and json.loads(member.read())["best"] == best.node
    loaded = load_run(path)
    try:
        assert loaded.best == best.node
    finally:
        loaded.close()
