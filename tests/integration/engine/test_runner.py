"""`[budget] cpu_hours` in a real evolution (Docker sandboxes, gateway, seed agent, scripted models):
the jobs' wall time, evaluations and expansions alike, stops the run, and `evolve status` shows it."""

import pytest

from evolve.archive.summary import render_summary, run_summary
from evolve.config import parse_config
from evolve.engine.launch import run_evolution
from evolve.standins.models import RoutedModel

CONFIG = """
[run]
name = "cpu-hours"
seed = 3
archive_dir = "{archive}"

[sandbox]
memory = "512m"
timeout_s = 120

[tasks]
suite = "humaneval"
limit = 4
heldout_limit = 1

[budget]
evaluations = 40
cpu_hours = 0.002  # 7.2 s of one-CPU jobs: a few evaluations
agent_steps = 2
improve_steps = 2
job_tokens = 50000
"""

MODELS = {  # the solver gives up at once: the run is about what its jobs cost, not their outcomes
    "diagnose": RoutedModel([], '```json\n{"problem": "p", "cause": "c", "change": "c", "files": []}\n```'),
    "modify": RoutedModel([], "```done\n```"),
    "solve": RoutedModel([], "```done\n```"),
}


@pytest.mark.docker
def test_the_cpu_hour_budget_stops_a_real_run(tmp_path, base_image):
    run, outcome = run_evolution(parse_config(CONFIG.format(archive=tmp_path)), models=MODELS)
    assert "CPU-hour budget spent" in outcome.stop_reason
    search = [j for j in run.jobs() if not (j.kind == "evaluate" and j.split == "heldout")]
    assert 0 < len([e for e in run.evaluations(split="dev")]) < 40
    seconds = sum(j.finished - j.started for j in search)
    assert seconds >= 0.002 * 3600  # it stopped only once the jobs had spent the budget
    summary = run_summary(run)
    assert summary["cpu_hours"] >= 0.002
    assert "CPU-hours" in render_summary(summary)
