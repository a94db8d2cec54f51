"""SWE-bench grading through the package's harness, on the fixture and a fake instance image built
offline FROM the base image (tests/data/swebench). The harness tests need the `swebench` extra."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from typer.testing import CliRunner

from evolve.archive.store import Run
from evolve.cli.app import app
from evolve.engine.evaluate import EvalSettings, evaluate
from evolve.llm.gateway import Gateway
from evolve.sandbox.factory import DockerSandboxes
from evolve.seed import copy_seed
from evolve.standins.models import ScriptedModel
from evolve.tasks.swebench import SWEbenchUnavailable, load_swebench
from evolve.tasks.swebench_grading import ensure_image, grade_swebench, swebench_sandbox

DATA = Path(__file__).resolve().parents[3] / "tests" / "data" / "swebench"
INSTANCES = DATA / "instances.jsonl"
BREAKS_ADD = """diff --git a/calc/__init__.py b/calc/__init__.py
--- a/calc/__init__.py
+++ b/calc/__init__.py
@@ -2,7 +2,7 @@
 
 
 def add(a, b):
-    return a + b
+    return a - b
 
 
 def mean(values):
"""


@pytest.fixture(scope="module")
def fake_image(swebench_image) -> str:
    return swebench_image


@pytest.fixture(scope="module")
def harness():
    return pytest.importorskip("swebench.harness.grading", reason="needs the swebench extra")


def test_the_fake_image_holds_the_fixture_base_commit(docker_client, fake_image):
    commit = docker_client.containers.run(fake_image, ["cat", "/base_commit"], remove=True).decode().strip()
    assert {json.loads(line)["base_commit"] for line in INSTANCES.read_text().splitlines()} == {commit}


def test_gold_patches_resolve_and_untouched_repos_do_not(fake_image, harness, monkeypatch):
    monkeypatch.setenv("EVOLVE_SWEBENCH_DATASET", str(INSTANCES))
    result = CliRunner().invoke(app, ["tasks", "check", "swebench-verified", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout.strip().splitlines()[-1]) == {
        "suite": "swebench-verified",
        "tasks": 2,
        "reference_pass": 2,
        "untouched_fail": 2,
        "mismatches": [],
    }


def test_a_patch_breaking_a_pass_to_pass_test_or_not_applying_fails(fake_image, harness):
    task = load_swebench(str(INSTANCES)).get("evolve-fixtures__calc-1")
    with swebench_sandbox(fake_image, "p2p") as sandbox:
        grade = grade_swebench(sandbox, task, BREAKS_ADD)
    assert grade.outcome == "fail" and "test_add" in grade.detail and "test_mean_empty" in grade.detail
    with swebench_sandbox(fake_image, "garbage") as sandbox:
        grade = grade_swebench(
            sandbox,
            task,
            "diff --git a/nope.py b/nope.py\n--- a/nope.py\n+++ b/nope.py\n@@ -1 +1 @@\n-a\n+b\n",
        )
    assert grade.outcome == "fail" and grade.detail == "the patch does not apply"


def test_a_missing_image_says_docker_hub_is_needed(docker_client):
    with pytest.raises(SWEbenchUnavailable) as caught:
        ensure_image("evolve-test/swebench-absent:latest")
    message = str(caught.value)
    assert "evolve-test/swebench-absent:latest" in message and "docker.io" in message and "GB" in message


def test_an_instance_image_that_cannot_be_had_makes_the_evaluation_infra_saying_why(tmp_path, docker_client):
    task = replace(
        load_swebench(str(INSTANCES)).get("evolve-fixtures__calc-1"),
        image="evolve-test/swebench-absent:latest",
    )
    run = Run.create(tmp_path / "run")
    node = run.add_node(copy_seed(tmp_path / "seed"))
    with Gateway(
        {"solve": ScriptedModel(["```done\n```"])}, exchanges_dir=run.path / "exchanges", usage_sink=run
    ) as gateway:
        result = evaluate(
            run,
            node.id,
            task,
            sandboxes=DockerSandboxes(run.id),
            gateway=gateway,
            settings=EvalSettings(infra_retries=0),
        )
    assert result.outcome == "infra" and "evolve-test/swebench-absent:latest" in result.detail
    assert "docker.io" in result.detail
    run.close()
