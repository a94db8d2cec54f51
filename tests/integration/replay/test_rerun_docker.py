"""`evolve replay --rerun` end to end: evaluations recorded in Docker with a scripted model are re-run
from their recorded exchanges alone (no model), and the outcomes are compared per node."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from evolve.archive import Run, export_lineage
from evolve.config import BudgetConfig, RunConfig
from evolve.engine.evaluate import EvalSettings, evaluate
from evolve.llm.gateway import Gateway
from evolve.sandbox.factory import DockerSandboxes
from evolve.seed import copy_seed
from evolve.standins.models import ScriptedModel
from evolve.tasks import load_suite

FIX = (
    "The bug is in get.\n```replace structs/lru.py\n<<<<<<< SEARCH\n            return default\n"
    "        return self._data[key]\n=======\n            return default\n"
    "        self._data.move_to_end(key)\n        return self._data[key]\n>>>>>>> REPLACE\n```"
)
TASK = "structs-lru-recency"


@pytest.fixture(scope="module")
def report(tmp_path_factory, base_image):
    """Two recorded evaluations (one pass, one fail), exported, then `evolve replay --rerun --json`."""
    tmp = tmp_path_factory.mktemp("rerun")
    config = RunConfig(budget=BudgetConfig(agent_steps=4))
    with Run.create(tmp / "run", config) as run:
        node = run.add_node(copy_seed(tmp / "seed"), origin="seed")
        task = load_suite(config.tasks.suite).get(TASK)
        for replies in ([FIX, "```done\n```"], ["```done\n```"]):
            with Gateway(
                {"solve": ScriptedModel(replies)}, exchanges_dir=run.path / "exchanges", usage_sink=run
            ) as gateway:
                evaluate(
                    run,
                    node.id,
                    task,
                    sandboxes=DockerSandboxes(run.id),
                    gateway=gateway,
                    settings=EvalSettings(budget_steps=4, infra_retries=0),
                )
        assert sorted(e.outcome for e in run.evaluations()) == ["fail", "pass"]
        bundle = export_lineage(run, tmp / "recorded.evolve.tar.gz")
    out = subprocess.run(
        [sys.executable, "-m", "evolve", "replay", str(bundle), "--rerun", "--json"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_rerun_verifies_the_code_and_reruns_every_recorded_evaluation(report):
    assert report["verified"] == report["nodes"] == 1
    (node,) = report["rerun"]
    assert node["compared"] == 2 and node["skipped"] == []


def test_rerun_outcomes_match_the_recorded_ones(report):
    (node,) = report["rerun"]
    assert node["matching"] == node["compared"] == 2, node["mismatches"]
