"""`[budget] cpu_hours` in a real evolution (Docker sandboxes, gateway, seed agent, scripted models):
the jobs' wall time, evaluations and expansions alike, stops the run, and `evolve status` shows it."""

import pytest

from evolve.archive.summary import render_summary, run_summary
from evolve.engine.launch import run_evolution
from evolve.standins.models import RoutedModel
from tests.integration.scripted import diagnosis, evolution_config, give_up, scripted_models

MODELS = scripted_models(diagnose=RoutedModel([], diagnosis(files=(), change="change the agent somehow")), modify=give_up(),
                         solve=give_up())  # the run is about what its jobs cost, not their outcomes


@pytest.mark.docker
def test_the_cpu_hour_budget_stops_a_real_run(tmp_path, base_image):
    config = evolution_config(tmp_path, "cpu-hours", 3, tasks={"limit": 4, "heldout_limit": 1},
                              budget={"evaluations": 40, "cpu_hours": 0.002,  # 7.2 s of one-CPU jobs: a few evaluations
                                      "agent_steps": 2, "improve_steps": 2, "job_tokens": 50000})
    run, outcome = run_evolution(config, models=MODELS)
    assert "CPU-hour budget spent" in outcome.stop_reason
    search = [j for j in run.jobs() if not (j.kind == "evaluate" and j.split == "heldout")]
    assert 0 < len([e for e in run.evaluations(split="dev")]) < 40
    seconds = sum(j.finished - j.started for j in search)
    assert seconds >= 0.002 * 3600  # it stopped only once the jobs had spent the budget
    summary = run_summary(run)
    assert summary["cpu_hours"] >= 0.002
    assert "CPU-hours" in render_summary(summary)
