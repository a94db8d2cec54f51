"""A short `evolve run` on SWE-bench instances, offline: the fixture dataset (tests/data/swebench) loaded as
`swebench-verified` from a local file, its instance image built offline, the seed agent and scripted
models. Every evaluation solves at /testbed in a container of the instance's image and is graded by the
harness's eval script in a fresh one, exactly as a real instance would be; the expansion's diagnosis
reads a SWE-bench failure."""

import json
from pathlib import Path

import pytest

from evolve.launch import run_evolution
from evolve.standins.models import RoutedModel
from tests.integration.scripted import DONE, SMOKE_EDIT, SMOKE_MARKER, evolution_config, scripted_models

INSTANCES = Path(__file__).resolve().parents[2] / "data" / "swebench" / "instances.jsonl"
DEV, HELDOUT = "evolve-fixtures__calc-2", "evolve-fixtures__calc-1"
"""The fixture's two instances fall one in each split (by id hash)."""
FIX_MEAN = (
    "```bash\nsed -i 's|return sum(values) / len(values)|return sum(values) / len(values) if values "
    "else 0.0|' calc/__init__.py\n```"
)
# The solver fixes the held-out instance (the mean of nothing) and gives up on the dev one, so the run
# holds a harness pass and a harness failure; the gate's smoke task gets its real edit.
SOLVE = RoutedModel([(SMOKE_MARKER, SMOKE_EDIT), ("The mean of no values", FIX_MEAN)], DONE)


@pytest.mark.docker
def test_a_scripted_run_solves_and_grades_swebench_instances_in_their_image(
    tmp_path, swebench_image, monkeypatch
):
    pytest.importorskip("swebench.harness.grading", reason="needs the swebench extra")
    monkeypatch.setenv("EVOLVE_SWEBENCH_DATASET", str(INSTANCES))
    config = evolution_config(
        tmp_path,
        "swebench-fixture",
        3,
        sandbox={"memory": "1g"},
        tasks={"suite": "swebench-verified"},
        policy={"name": "greedy"},
        budget={"evaluations": 2, "expansions": 1, "agent_steps": 3, "improve_steps": 3, "job_tokens": 50000},
    )
    run, outcome = run_evolution(config, models=scripted_models(solve=SOLVE))

    outcomes = {(e.node, e.task): e for e in run.evaluations()}
    seed = run.nodes()[0].id
    dev = outcomes[(seed, DEV)]
    assert dev.outcome == "fail" and dev.split == "dev", outcome
    grade = (Path(dev.log_path) / "grade.log").read_text()
    assert grade.startswith("fail: RESOLVED_NO: failing tests/test_calc.py::test_clamp_high"), grade
    assert ">>>>> Start Test Output" in grade  # the instance's own eval script ran

    heldout = [e for e in outcomes.values() if e.task == HELDOUT]
    assert heldout and all(e.outcome == "pass" and e.split == "heldout" for e in heldout), heldout
    solved = Path(heldout[0].log_path)
    assert (solved / "grade.log").read_text().startswith("pass: resolved")
    assert "if values else 0.0" in (solved / "diff.patch").read_text()

    (expansion,) = [j for j in run.jobs() if j.kind == "expand"]
    problem = json.loads((run.log_dir(expansion.id) / "problem.json").read_text())
    assert problem["task"] == DEV and "clamp" in problem["statement"]
    # what the agent printed, not the engine's call
    assert "--workdir /testbed" not in problem["agent_output"]
    diagnosis = [
        json.loads(line)
        for line in (run.path / "exchanges" / f"job-{expansion.id}-diagnose.jsonl").read_text().splitlines()
    ]
    assert diagnosis and "clamp" in json.dumps(diagnosis[0]["request"])
