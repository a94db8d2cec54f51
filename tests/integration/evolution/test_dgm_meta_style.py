"""`[meta] style = "dgm"` in a real evolution (Docker sandboxes, gateway, seed agent, scripted models):
every expansion records the branch DGM's rules chose and a diagnosis in DGM's schema, and the child's
instructions are DGM's prompt."""

import json

import pytest

from evolve.launch import run_evolution
from evolve.meta.dgm import FIELDS, SPECIAL
from evolve.standins.models import RoutedModel
from tests.integration.scripted import ONE_EXPANSION, TWO_TASKS, evolution_config, give_up, scripted_models

DIAGNOSIS = {name: f"scripted {name}" for name in FIELDS}
MODELS = scripted_models(
    diagnose=RoutedModel([], "```json\n" + json.dumps(DIAGNOSIS) + "\n```"), solve=give_up()
)


@pytest.mark.docker
def test_dgm_style_records_the_branch_and_dgms_schema_per_expansion(tmp_path, base_image):
    config = evolution_config(
        tmp_path,
        "dgm-style",
        5,
        tasks=TWO_TASKS,
        # the diagnoser sees the whole code: its prompt is reserved at its UTF-8 size
        budget={**ONE_EXPANSION, "job_tokens": 200000},
        policy={"name": "greedy"},
        meta={"style": "dgm"},
    )
    run, outcome = run_evolution(config, models=MODELS)
    expansions = [j for j in run.jobs() if j.kind == "expand" and j.state == "finished"]
    assert expansions, outcome
    for job in expansions:
        log_dir = run.log_dir(job.id)
        entry = json.loads((log_dir / "dgm-entry.json").read_text())
        assert entry["branch"] in (*SPECIAL, "task")
        assert (entry["task"] is not None) == (entry["branch"] == "task")
        diagnosis = json.loads((log_dir / "diagnosis.json").read_text())
        assert diagnosis["entry"] == entry
        assert {name: diagnosis[name] for name in FIELDS if name != "log_summarization"} == {
            name: DIAGNOSIS[name] for name in FIELDS if name != "log_summarization"
        }
        instructions = (log_dir / "instructions.md").read_text()
        assert instructions.startswith("# Coding agent summary") and "# To Implement" in instructions
    exchanges = [
        json.loads(line)
        for path in (run.path / "exchanges").glob("job-*-diagnose.jsonl")
        for line in path.read_text().splitlines()
    ]
    assert exchanges and all("# agent/loop.py" in e["request"]["messages"][0]["content"] for e in exchanges)
