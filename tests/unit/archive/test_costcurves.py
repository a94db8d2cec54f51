"""The figures papers compare, replayed from a scripted run: the curves end at the archive's own figures,
each improvement is a new leader above the old one, and the report draws all four."""

from __future__ import annotations

import pytest

from evolve.archive.compute import run_cpu_hours
from evolve.archive.costcurves import cost_curves
from evolve.config import BudgetConfig
from evolve.report import collect, render
from tests.unit.engine.conftest import seeded_run


@pytest.fixture(scope="module")
def scripted_run(tmp_path_factory):
    from evolve.engine.executors import LocalExecutor
    from evolve.engine.runner import Runner
    from evolve.search import HGMPolicy
    from evolve.standins.worker import ScriptedWorker
    from tests.unit.engine.conftest import HELDOUT, TASKS

    run = seeded_run(tmp_path_factory.mktemp("costs") / "run")
    executor = LocalExecutor(2)
    try:
        Runner(
            run,
            HGMPolicy(),
            ScriptedWorker(run, seed=5, delay_s=0.01),
            executor,
            search_tasks=TASKS,
            heldout_tasks=HELDOUT,
            budget=BudgetConfig(evaluations=60),
            concurrency=2,
            seed=5,
        ).execute()
    finally:
        executor.shutdown(cancel_pending=True)
    yield run
    run.close()


def test_the_curves_end_at_the_archives_figures(scripted_run):
    run = scripted_run
    curves = cost_curves(run, min_results=3)
    assert curves.expansions == sorted(curves.expansions) and curves.expansions[-1] == len(run.nodes()) - 1
    assert curves.cpu_hours == sorted(curves.cpu_hours)
    assert curves.cpu_hours[-1] == pytest.approx(run_cpu_hours(run, 1.0))
    tree = run.tree(with_tasks=False)
    qualified = [
        tree.own_counts(n.id).mean for n in run.nodes() if n.valid and tree.own_counts(n.id).total >= 3
    ]
    assert curves.best[-1] == pytest.approx(max(qualified))
    evaluated = [n for n in run.nodes() if n.valid and tree.own_counts(n.id).total]
    assert sum(len(rates) for rates in curves.generations.values()) == len(evaluated)
    for node in evaluated:
        assert tree.own_counts(node.id).mean in curves.generations[tree.depth(node.id)]


def test_each_improvement_is_a_first_lead_and_its_cost_adds_up(scripted_run):
    curves = cost_curves(scripted_run, min_results=3)
    leaders = [i.node for i in curves.improvements]
    assert (
        curves.improvements and len(set(leaders)) == len(leaders) and "0" not in leaders
    )  # the seed: baseline
    assert all(i.spent_cpu_hours >= 0 and i.spent_expansions >= 0 for i in curves.improvements)
    assert sum(i.spent_cpu_hours for i in curves.improvements) <= curves.improvements[-1].cpu_hours + 1e-9
    for improvement in curves.improvements:  # the curve holds the improvement's rate at its point
        assert improvement.rate in curves.best


def test_the_report_draws_the_four_figures(scripted_run):
    page = render(collect(scripted_run))
    for chart in ("best-by-expansions", "best-by-cpu-hours", "score-by-generation", "cost-per-improvement"):
        assert f'id="{chart}"' in page
    assert page.count('<rect class="bar"') == len(cost_curves(scripted_run).improvements)
    assert "improvement" in page.split("id='cost-per-improvement-line'>")[1].split("</p>")[0]
