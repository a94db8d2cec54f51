"""The binding budget in a real evolution (Docker sandboxes, gateway, seed agent, scripted models):
`[budget] cpu_hours` (the jobs' wall time, evaluations and expansions alike) and `[budget] dollars`
(the gateway's bill) stop the run within one job's price of the limit, the held-out scoring included,
every decision records the prices it was made on (measured from the run's finished jobs, the plan's
as priors), and `evolve status` shows the CPU-hours."""

import pytest

from evolve.archive.compute import run_cpu_hours
from evolve.archive.summary import render_summary, run_summary
from evolve.archive.vocab import JobKind, StopReason
from evolve.engine.costs import Priors
from evolve.launch import run_evolution
from evolve.standins.models import Charged, RoutedModel
from tests.integration.scripted import diagnosis, evolution_config, give_up, scripted_models

MODELS = scripted_models(
    diagnose=RoutedModel([], diagnosis(files=(), change="change the agent somehow")),
    modify=give_up(),
    solve=give_up(),
)  # the run is about what its jobs cost, not their outcomes


def _config(tmp_path, name: str, **budget):
    # Enough tasks and evaluations that neither binds first: with every child refused (the scripted
    # modification changes nothing), the seed alone must not run out of tasks on a quiet machine.
    return evolution_config(
        tmp_path,
        name,
        3,
        tasks={"limit": 60, "heldout_limit": 1},
        policy={"name": "hgm_cost"},
        executor={"concurrency": 1},
        budget={"evaluations": 80, "agent_steps": 2, "improve_steps": 2, "job_tokens": 50000, **budget},
    )


def _check_decisions(run, unit: str, prior: tuple[float, float]) -> None:
    """Each decision names the binding unit and prices its jobs from the plan's prior towards the run's
    own measured jobs: the first at the prior, and every later one at the mean it had measured by then."""
    decisions = run.decisions()
    assert decisions and {d.spend.unit for d in decisions} == {unit}
    first = decisions[0].spend
    assert (first.evaluation_price, first.expansion_price) == pytest.approx(prior)
    last = decisions[-1].spend
    assert last.evaluations_measured > 0
    assert last.evaluation_price != pytest.approx(prior[0])  # it moved: the run's own jobs are in it
    assert last.reserve == pytest.approx(last.evaluation_price)  # the final agent's one held-out task


@pytest.mark.docker
def test_the_cpu_hour_budget_stops_a_real_run_within_one_job(tmp_path, base_image):
    # 72 s of one-CPU jobs: a few evaluations (5-8 s each here) and an expansion or two (about 20 s)
    limit = 0.02
    prior = (5.0 / 3600, 20.0 / 3600)  # the plan's guess: an expansion 4x an evaluation
    config = _config(tmp_path, "cpu-hours", cpu_hours=limit)
    run, outcome = run_evolution(config, models=MODELS, priors=Priors(*prior))
    assert outcome.stop == StopReason.CPU_HOUR_BUDGET, outcome.stop_reason
    assert "CPU-hour budget spent" in outcome.stop_reason
    jobs = run.jobs()
    dearest = max(j.finished - j.started for j in jobs) / 3600
    spent = run_cpu_hours(run, config.sandbox.cpus)  # every job, the held-out scoring included
    assert limit - 2 * dearest <= spent <= limit + dearest
    assert 0 < len(run.evaluations(split="dev")) < 80
    _check_decisions(run, "cpu_hours", prior)
    summary = run_summary(run)
    assert summary["cpu_hours"] == pytest.approx(spent, abs=1e-4)
    assert "CPU-hours" in render_summary(summary)


@pytest.mark.docker
def test_the_dollar_budget_stops_a_real_run_within_one_job(tmp_path, base_image):
    # $10 per million tokens on every role: an expansion (a diagnosis, a modification and the gate's smoke
    # solves, each reading the agent's code) comes to several evaluations (a solve or two)
    models = {role: Charged(model, 10e-6) for role, model in MODELS.items()}
    limit, prior = 0.15, (0.006, 0.024)
    config = _config(tmp_path, "dollars", dollars=limit)
    run, outcome = run_evolution(
        config, models=models, priors=Priors(evaluation_dollars=prior[0], expansion_dollars=prior[1])
    )
    assert outcome.stop == StopReason.DOLLAR_BUDGET, outcome.stop_reason
    _, dollars = run.usage_totals()
    dearest = max(d.spend.expansion_price for d in run.decisions())
    assert limit - 2 * dearest <= dollars <= limit + dearest  # within one job's price
    _check_decisions(run, "dollars", prior)
    last = run.decisions()[-1].spend
    evaluations, expansions = run.job_totals()[JobKind.EVALUATE][0], run.job_totals()[JobKind.EXPAND][0]
    assert last.evaluations_measured <= evaluations and last.expansions_measured <= expansions
    assert last.expansion_price > 2 * last.evaluation_price  # an expansion is dearer, measured as priced
