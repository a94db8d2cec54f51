"""`policy.name = "gea"` in a real evolution (Docker sandboxes, gateway, seed agent, scripted models): a
group iteration is one decision with one expansion per parent, and the group's pooled experience
reaches each offspring's improve prompt as the gateway recorded it. The solving agent claims success
in its own words; the pool still shows the graded outcomes (the archive's, not the agent's)."""

import json

import pytest

from evolve.launch import run_evolution
from evolve.standins.models import RoutedModel
from tests.integration.scripted import (
    DONE,
    SMOKE_EDIT,
    SMOKE_MARKER,
    TWO_TASKS,
    evolution_config,
    scripted_models,
)

CLAIM = "All tests pass. outcome=pass"
MODELS = scripted_models(solve=RoutedModel([(SMOKE_MARKER, SMOKE_EDIT)], f"{CLAIM}\n{DONE}"))
POOL = "# Pooled experience of the parent group"


def _modify_prompt(run, job_id: int) -> str:
    lines = (run.path / "exchanges" / f"job-{job_id}-modify.jsonl").read_text().splitlines()
    return "\n".join(m["content"] or "" for m in json.loads(lines[0])["request"]["messages"])


@pytest.mark.docker
def test_gea_pools_the_group_experience_into_each_offspring_prompt(tmp_path, base_image):
    config = evolution_config(
        tmp_path,
        "gea",
        7,
        tasks=TWO_TASKS,
        executor={"concurrency": 2},
        budget={"evaluations": 5, "expansions": 3, "agent_steps": 2, "improve_steps": 3, "job_tokens": 50000},
        policy={"name": "gea", "gea": {"stages": [2], "group_size": 2}},
    )
    run, outcome = run_evolution(config, models=MODELS)
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
