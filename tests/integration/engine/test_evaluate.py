"""evaluate() end to end in Docker: the seed agent, driven by a scripted model through the real gateway."""

from __future__ import annotations

import json

import pytest

from evolve.archive.store import Run
from evolve.engine.evaluate import EvalSettings, evaluate
from evolve.llm.gateway import Gateway
from evolve.sandbox.factory import DockerSandboxes
from evolve.seed import copy_seed
from evolve.standins.models import ScriptedModel
from evolve.tasks import load_suite

FIX = (
    "The bug is in get.\n```replace structs/lru.py\n<<<<<<< SEARCH\n            return default\n        "
    "return self._data[key]\n=======\n            return default\n        self._data.move_to_end(key)\n   "
    "     return self._data[key]\n>>>>>>> REPLACE\n```"
)


@pytest.fixture
def seeded_run(tmp_path, base_image):
    run = Run.create(tmp_path / "run")
    node = run.add_node(copy_seed(tmp_path / "seed"), origin="seed")
    yield run, node.id
    run.close()


def _evaluate(run, node_id, replies, task_id, tmp_path):
    task = load_suite("builtin").get(task_id)
    with Gateway(
        {"solve": ScriptedModel(replies)}, exchanges_dir=run.path / "exchanges", usage_sink=run
    ) as gateway:
        return evaluate(
            run,
            node_id,
            task,
            sandboxes=DockerSandboxes(run.id),
            gateway=gateway,
            settings=EvalSettings(budget_steps=4),
        )


def test_seed_agent_solves_with_a_scripted_model(seeded_run, tmp_path):
    run, node_id = seeded_run
    result = _evaluate(run, node_id, [FIX, "```done\n```"], "structs-lru-recency", tmp_path)
    assert result.outcome == "pass", (result.detail, (result.log_dir / "agent.log").read_text())
    assert result.tokens > 0
    transcript = [json.loads(line) for line in (result.log_dir / "transcript.jsonl").read_text().splitlines()]
    assert transcript[-1]["event"] == "exit" and transcript[-1]["status"] == "submitted"
    assert "move_to_end" in (result.log_dir / "diff.patch").read_text()
    (evaluation,) = run.evaluations(node_id)
    assert evaluation.outcome == "pass" and evaluation.task == "structs-lru-recency"
    assert [j.state for j in run.jobs()] == ["finished"]


def test_editing_the_tests_earns_no_credit(seeded_run, tmp_path):
    run, node_id = seeded_run
    cheat = (
        "```bash\nrm -rf tests && mkdir tests && printf 'def test_ok():\\n    pass\\n' > "
        "tests/test_structs_lru_recency.py"
        " && printf 'import pytest\\n' > conftest.py\n```"
    )
    result = _evaluate(run, node_id, [cheat, "```done\n```"], "structs-lru-recency", tmp_path)
    assert result.outcome == "fail", result.detail
    grade_log = (result.log_dir / "grade.log").read_text()
    assert "tests/test_basics.py" in grade_log and "conftest.py" in grade_log  # the dropped paths
