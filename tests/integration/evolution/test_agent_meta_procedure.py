"""`[meta] procedure = "agent"` in a real evolution (Docker sandboxes, gateway, the seed agent, scripted
models): the node's own `python -m agent diagnose` reads the failure material and writes the instructions
that reach its child's `improve`, and the gate checks the child's diagnose too. The recorded exchanges
show both: the diagnose request holds the material, the improve request holds the diagnose reply."""

import json

import pytest

from evolve.launch import run_evolution
from evolve.standins.models import RoutedModel
from tests.integration.scripted import ONE_EXPANSION, TWO_TASKS, evolution_config, scripted_models

DIAGNOSIS = (
    "Agent-side diagnosis: the agent gives up at once; make it read the task's files before it finishes."
)
MODELS = scripted_models(diagnose=RoutedModel([], DIAGNOSIS))


def requests(run, job_id: int, step: str) -> list[str]:
    path = run.path / "exchanges" / f"job-{job_id}-{step}.jsonl"
    return [json.loads(line)["request"]["messages"][-1]["content"] for line in path.read_text().splitlines()]


@pytest.mark.docker
def test_the_agents_diagnose_writes_the_instructions_its_childs_improve_gets(tmp_path, base_image):
    config = evolution_config(
        tmp_path,
        "agent-meta",
        5,
        sandbox={"timeout_s": 180},
        tasks=TWO_TASKS,
        budget=ONE_EXPANSION,
        policy={"name": "greedy"},
        meta={"procedure": "agent"},
    )
    run, outcome = run_evolution(config, models=MODELS)
    expansions = [j for j in run.jobs() if j.kind == "expand" and j.state == "finished"]
    assert expansions, outcome
    failed = {e.task for e in run.evaluations(run.nodes()[0].id, split="dev") if e.outcome != "pass"}
    for job in expansions:
        log_dir = run.log_dir(job.id)
        assert not (log_dir / "problem.json").exists()  # the engine chose no problem: the agent did
        (diagnosis,) = requests(run, job.id, "diagnose")  # the seed's one model call, from its sandbox
        assert "its failure patterns, counted" in diagnosis and "--- SUMMARY.md ---" in diagnosis
        # the agent's own code counted the recorded conversations and mapped itself (agent/evidence.py)
        assert "Failure patterns, counted by the agent's own code over " in diagnosis
        assert (
            "  agent/loop.py:Agent.run  [lines " in diagnosis and "--- conversations.jsonl" not in diagnosis
        )
        assert all(task in diagnosis for task in failed)
        assert (log_dir / "instructions.md").read_text() == DIAGNOSIS
        # what the agent wrote reached improve's prompt
        assert DIAGNOSIS in requests(run, job.id, "modify")[0]
        # the gate ran the child's
        assert (log_dir / "validate-diagnose.log").read_text().startswith("exit 0")
    children = [n for n in run.nodes() if n.parent is not None]
    assert children and all(c.valid and c.instructions == DIAGNOSIS for c in children), [
        c.reason for c in children
    ]
