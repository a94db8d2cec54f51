"""The runner and the search benchmark hand a policy identical views for the same history:
the runner prices its view from the archive's rows, the benchmark from its world's charges, and both
go through `evolve.search.spend.priced_view`. And the runner's priced decisions: recorded per decision,
within one job's price of the binding budget, the same after a resume."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pytest

from evolve.archive.vocab import StopReason
from evolve.config import BudgetConfig
from evolve.engine.costs import Priors
from evolve.engine.executors import LocalExecutor
from evolve.engine.runner import Runner
from evolve.search import HGMCostPolicy, SearchView
from evolve.search.simulate import WorldParams, run_episode
from evolve.standins.worker import ScriptedWorker

from .conftest import HELDOUT, TASKS, seeded_run

EVALUATION_TOKENS, EXPANSION_TOKENS = 100, 400  # an expansion priced 4x an evaluation
PRIORS = Priors(evaluation_tokens=150.0, expansion_tokens=300.0)  # the plan's guess, off on both


@dataclass
class Recording:
    """A policy that keeps every view it is handed and decides as hgm_cost."""

    inner: HGMCostPolicy = field(default_factory=HGMCostPolicy)
    views: list[SearchView] = field(default_factory=list)
    name: str = "hgm_cost"

    def next_action(self, view, rng):
        self.views.append(view)
        return self.inner.next_action(view, rng)

    def best(self, view):
        return self.inner.best(view)


class ReplayWorld:
    """The run's own history as a benchmark world: its children (in creation order, valid or not),
    its outcomes, and the scripted worker's prices."""

    def __init__(self, run) -> None:
        self._nodes = run.nodes()
        self._outcomes = {(e.node, e.task): e.outcome == "pass" for e in run.evaluations(split="dev")}
        self.valid, self.parent = [True], [-1]

    def spawn(self, parent: int) -> int:
        child = len(self.valid)
        self.valid.append(self._nodes[child].valid)
        self.parent.append(parent)
        return child

    def evaluate(self, node: int, task: str) -> bool:
        return self._outcomes[str(node), task]

    def true_quality(self, node: int) -> float:
        return 0.0

    def evaluation_price(self, node: int) -> float:
        return float(EVALUATION_TOKENS)

    def expansion_price(self, parent: int) -> float:
        return float(EXPANSION_TOKENS)

    @property
    def nominal_prices(self) -> tuple[float, float]:
        return PRIORS.evaluation_tokens, PRIORS.expansion_tokens


def _runner(run, budget: BudgetConfig, policy, concurrency: int = 1, **worker):
    worker = ScriptedWorker(
        run, seed=5, tokens_per_job=EVALUATION_TOKENS, expand_tokens=EXPANSION_TOKENS, **worker
    )
    executor = LocalExecutor(concurrency)
    runner = Runner(
        run,
        policy,
        worker,
        executor,
        search_tasks=TASKS,
        heldout_tasks=HELDOUT,
        heldout_seed=True,
        budget=budget,
        concurrency=concurrency,
        seed=3,
        priors=PRIORS,
    )
    return runner, executor


def _same(runner_view: SearchView, bench_view: SearchView) -> None:
    assert [str(i) for i in bench_view.ids] == list(runner_view.ids)
    for name in ("parent", "valid", "successes", "failures", "clade_successes", "clade_failures"):
        assert np.array_equal(getattr(runner_view, name), getattr(bench_view, name)), name
    for name in (
        "evaluated",
        "solved",
        "task_order",
        "budget",
        "used",
        "pending_evaluations",
        "pending_expansions",
        "expansions_left",
        "spend",
    ):
        assert getattr(runner_view, name) == getattr(bench_view, name), name


def test_the_runner_and_the_bench_hand_a_policy_identical_views(tmp_path):
    run = seeded_run(tmp_path / "run")
    budget = BudgetConfig(evaluations=60, tokens=6000)
    in_run = Recording()
    runner, executor = _runner(run, budget, in_run, invalid_every=4)
    try:
        runner.execute()
    finally:
        executor.shutdown(cancel_pending=True)
    in_bench = Recording()
    run_episode(
        in_bench,
        WorldParams(),
        budget.tokens,
        seed=0,
        expand_cost=4.0,
        world=ReplayWorld(run),
        task_order=runner.state.task_order,
        decision_rng=lambda decision: np.random.default_rng([3, decision]),
        unit="tokens",
        evaluation_limit=budget.evaluations,
        reserve_jobs=2 * len(HELDOUT),
    )
    assert len(in_run.views) == len(in_bench.views) > 20
    for runner_view, bench_view in zip(in_run.views, in_bench.views, strict=True):
        _same(runner_view, bench_view)
    last = in_run.views[-1].spend
    assert last.unit == "tokens" and last.reserve == 2 * len(HELDOUT) * last.evaluation_price
    # the prices moved from the plan's towards the measured ones as jobs finished
    assert in_run.views[0].spend.expansion_price == PRIORS.expansion_tokens
    assert 300 < last.expansion_price <= EXPANSION_TOKENS and 100 <= last.evaluation_price < 150


@pytest.mark.parametrize("concurrency", [1, 3])
def test_a_priced_run_stops_within_one_job_of_its_budget_and_records_its_prices(tmp_path, concurrency):
    run = seeded_run(tmp_path / "run")
    budget = BudgetConfig(evaluations=500, tokens=5000)
    runner, executor = _runner(run, budget, HGMCostPolicy(), concurrency, delay_s=0.01)
    try:
        outcome = runner.execute()
    finally:
        executor.shutdown(cancel_pending=True)
    tokens, _ = run.usage_totals()
    assert outcome.stop == StopReason.TOKEN_BUDGET, outcome.stop_reason
    assert tokens <= budget.tokens + EXPANSION_TOKENS  # held-out scoring included
    assert tokens > budget.tokens - 2 * EXPANSION_TOKENS
    decisions = run.decisions()
    jobs = [j for j in run.jobs() if j.decision is not None]
    assert [d.decision for d in decisions] == sorted({j.decision for j in jobs})
    assert {d.action for d in decisions} == {"evaluate", "expand"}
    assert all(d.spend.unit == "tokens" and d.spend.limit == 5000 for d in decisions)
    assert decisions[0].spend.expansion_price == PRIORS.expansion_tokens
    assert decisions[-1].spend.expansion_price == pytest.approx(
        (2 * PRIORS.expansion_tokens + EXPANSION_TOKENS * decisions[-1].spend.expansions_measured)
        / (2 + decisions[-1].spend.expansions_measured)
    )


def test_a_resumed_run_keeps_the_priors_it_started_with(tmp_path):
    run = seeded_run(tmp_path / "run")
    runner, executor = _runner(run, BudgetConfig(evaluations=5, tokens=100_000), HGMCostPolicy())
    try:
        runner.execute()
    finally:
        executor.shutdown(cancel_pending=True)
    worker = ScriptedWorker(run, tokens_per_job=EVALUATION_TOKENS)
    again = Runner(
        run,
        HGMCostPolicy(),
        worker,
        LocalExecutor(1),
        search_tasks=TASKS,
        budget=BudgetConfig(evaluations=5, tokens=100_000),
        concurrency=1,
        seed=3,
        priors=Priors(evaluation_tokens=1.0, expansion_tokens=1.0),
    )
    assert again.priors == PRIORS


def test_a_priced_run_stopped_and_resumed_decides_and_prices_as_one_that_never_stopped(tmp_path):
    budget = BudgetConfig(evaluations=500, tokens=5000)

    def priced_run(path, stop_after: int | None):
        run = seeded_run(path)
        runner, executor = _runner(run, budget, HGMCostPolicy())
        if stop_after is not None:
            evaluate = runner.worker.evaluate
            stopped_at: list[int] = []

            def stopping(job, node, task, split):
                result = evaluate(job, node, task, split)
                if job.decision >= stop_after and not stopped_at:
                    stopped_at.append(job.decision)
                    runner.request_stop()  # the first Ctrl-C, mid-search, at an evaluation
                return result

            runner.worker.evaluate = stopping
        runner.execute()
        executor.shutdown(cancel_pending=True)
        if stop_after is not None:
            assert len(run.decisions()) == stopped_at[0] + 1
            again, executor = _runner(run, budget, HGMCostPolicy())
            again.execute()
            executor.shutdown(cancel_pending=True)
        return [(j.kind, j.node, j.task) for j in run.jobs()], run.decisions()

    whole_jobs, whole = priced_run(tmp_path / "whole", None)
    resumed_jobs, resumed = priced_run(tmp_path / "resumed", 6)
    assert resumed_jobs == whole_jobs
    assert resumed == whole  # every decision saw the same budget and prices
