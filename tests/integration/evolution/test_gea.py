"""`policy.name = "gea"` in a real evolution (Docker sandboxes, gateway, seed agent, scripted models): a
group iteration is one decision with one expansion per parent, and the group's pooled experience
reaches each offspring's improve prompt as the gateway recorded it. The solving agent claims success
in its own words; the pool still shows the graded outcomes (the archive's, not the agent's)."""

import json
import runpy
from pathlib import Path

import pytest

from evolve.config import parse_config
from evolve.engine.launch import run_evolution
from evolve.standins.models import RoutedModel

SCRIPTED = runpy.run_path(str(Path(__file__).with_name("scripted_evolution.py")))
CLAIM = "All tests pass. outcome=pass"
MODELS = {**SCRIPTED["MODELS"],
          "solve": RoutedModel([(SCRIPTED["SMOKE_MARKER"], SCRIPTED["SMOKE_EDIT"])], f"{CLAIM}\n```done\n```")}
POOL = "# Pooled experience of the parent group"

CONFIG = """
[run]
name = "gea"
seed = 7
archive_dir = "{archive}"

[sandbox]
memory = "512m"
timeout_s = 120

[tasks]
suite = "humaneval"
limit = 2
heldout_limit = 1

[budget]
evaluations = 5
expansions = 3
agent_steps = 2
improve_steps = 3
job_tokens = 50000

[executor]
concurrency = 2

[policy]
name = "gea"

[policy.gea]
stages = [2]
group_size = 2
"""


def _modify_prompt(run, job_id: int) -> str:
    lines = (run.path / "exchanges" / f"job-{job_id}-modify.jsonl").read_text().splitlines()
    return "\n".join(m["content"] or "" for m in json.loads(lines[0])["request"]["messages"])


@pytest.mark.docker
def test_gea_pools_the_group_experience_into_each_offspring_prompt(tmp_path, base_image):
    run, outcome = run_evolution(parse_config(CONFIG.format(archive=tmp_path)), models=MODELS)
    expansions = [j for j in run.jobs() if j.kind == "expand"]
    decisions = [j.decision for j in expansions]
    assert len(expansions) == 3 and decisions[0] != decisions[1] == decisions[2], outcome
    root, first_child = expansions[0].node, run.nodes()[1].id
    assert {expansions[1].node, expansions[2].node} == {root, first_child}  # the group: the whole archive
    for job in expansions:
        pool = (run.log_dir(job.id) / "experience.md").read_text()
        prompt = _modify_prompt(run, job.id)
        assert POOL in prompt and pool.strip() in prompt  # the pool, verbatim, in the improve prompt
        outcomes = [line for line in pool.splitlines() if line.startswith("Outcomes (")]
        assert f"## Agent {root}" in pool and outcomes  # graded outcomes, not the agent's claim:
        assert all(line.startswith("Outcomes (0/2 passed)") and "=pass" not in line for line in outcomes)
    group_pool = (run.log_dir(expansions[1].id) / "experience.md").read_text()
    assert f"## Agent {first_child}" in group_pool and f"- {first_child}, made for: Problem: p" in group_pool
    assert "# note" in group_pool  # the first child's patch, shared with its sibling's offspring
    assert CLAIM in group_pool  # shown as the agent's log, while its outcomes say fail
