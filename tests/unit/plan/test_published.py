"""`evolve plan` calibrated on the published runs: the figures in evolve.plan.published are
what the bundles measure, the plan of the published CPU evolution's config is within 25 % of what
that run spent, and `--from RUN` plans on the run's own figures."""

from __future__ import annotations

from pathlib import Path

import pytest

from evolve.archive.compute import run_cpu_hours
from evolve.archive.lineage import import_bundle
from evolve.config import load_config
from evolve.plan import make_plan
from evolve.plan.profiles import default_profile, measure_bundles
from evolve.plan.published import BUNDLES, CALIBRATED

ROOT = Path(__file__).resolve().parents[3]
PUBLISHED = ROOT / "archive" / "published"


@pytest.fixture(scope="module")
def cpu_run(tmp_path_factory):
    """The published CPU evolution, imported, and what it spent."""
    run = import_bundle(
        PUBLISHED / "humaneval-cpu.evolve.tar.gz", tmp_path_factory.mktemp("pub") / "humaneval-cpu"
    )
    tokens, _ = run.usage_totals()
    spent = {
        "tokens": tokens,
        "cpu_hours": run_cpu_hours(run, 1.0),
        "evaluations": len(run.evaluations()),
        "expansions": sum(j.kind == "expand" for j in run.jobs()),
    }
    run.close()
    return run.path, spent


def _config(tmp_path):
    config = load_config(ROOT / "evolve" / "configs" / "humaneval-cpu.toml")
    # no earlier runs
    return config.model_copy(update={"run": config.run.model_copy(update={"archive_dir": tmp_path})})


@pytest.mark.parametrize("key", list(CALIBRATED))
def test_the_calibrated_figures_are_what_the_published_bundles_measure(key):
    measured = measure_bundles([PUBLISHED / name for name in BUNDLES[key]], default_profile(key[0]))
    table = CALIBRATED[key]
    assert measured is not None
    assert measured.evaluation_minutes == pytest.approx(table.evaluation_minutes, rel=1e-3)
    assert measured.expansion_minutes == pytest.approx(table.expansion_minutes, rel=1e-3)
    for kind in ("evaluation", "expansion"):
        assert getattr(measured, kind).total == pytest.approx(getattr(table, kind).total, rel=1e-3)
    assert default_profile("humaneval", key[1]) is table


def test_the_humaneval_cpu_plan_is_within_a_quarter_of_what_its_published_run_spent(cpu_run, tmp_path):
    _, spent = cpu_run
    plan = make_plan(_config(tmp_path), check=False)
    assert plan.profile.source.startswith("published")
    assert (plan.counts.evaluations, plan.counts.expansions) == (spent["evaluations"], spent["expansions"])
    assert plan.tokens.total == pytest.approx(spent["tokens"], rel=0.25)
    assert plan.cpu_hours == pytest.approx(spent["cpu_hours"], rel=0.25)


def test_from_run_plans_on_the_runs_own_figures(cpu_run, tmp_path):
    path, spent = cpu_run
    plan = make_plan(_config(tmp_path), measured_from=[path], check=False)
    assert plan.profile.source.startswith("measured")
    assert plan.tokens.total == pytest.approx(spent["tokens"], rel=1e-6)
    assert plan.cpu_hours == pytest.approx(spent["cpu_hours"], rel=1e-6)
