"""The SWE-bench adapter on a fixture in the dataset's format (tests/data/swebench): no Docker, no network."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evolve.tasks import load_suite
from evolve.tasks.subsets import SWEBENCH_SUBSETS
from evolve.tasks.swebench import (
    INSTANCE_FILE,
    SWEbenchUnavailable,
    instance_image,
    is_swebench,
    load_instances,
    load_swebench,
    swebench_suite,
    task_instance,
)
from evolve.tasks.types import TaskError

FIXTURE = Path(__file__).resolve().parents[2] / "data" / "swebench" / "instances.jsonl"


def test_instances_become_tasks_whose_image_carries_the_repo():
    suite = load_swebench(str(FIXTURE))
    assert [t.id for t in suite] == ["evolve-fixtures__calc-1", "evolve-fixtures__calc-2"]
    task = suite.get("evolve-fixtures__calc-1")
    raw = json.loads(FIXTURE.read_text().splitlines()[0])
    assert task.repo == {} and task.image == "evolve-test/swebench-fake:latest"
    assert task.statement == raw["problem_statement"] and task.reference_patch == raw["patch"]
    assert is_swebench(task) and task_instance(task)["FAIL_TO_PASS"] == raw["FAIL_TO_PASS"]
    assert task.is_protected(INSTANCE_FILE)  # the grading record is hidden like tests


def test_a_task_solves_and_grades_in_its_instance_image_with_its_tests_protected():
    task = load_swebench(str(FIXTURE)).get("evolve-fixtures__calc-1")
    assert task.solve_image == task.grade_image == "evolve-test/swebench-fake:latest"
    assert (task.repo_in_image, task.grader, task.writable_root) == ("/testbed", "swebench", True)
    assert task.protected_paths == ("tests/test_calc.py",)  # the test patch's files
    for path in ("tests/test_calc.py", "conftest.py", "calc/conftest.py", "setup.cfg", "tests/new.py"):
        assert task.is_protected(path), path
    assert not task.is_protected("calc/__init__.py")


def test_which_expected_tests_fail_comes_from_the_records_alone():
    pytest.importorskip("swebench.harness.grading", reason="needs the swebench extra")
    from evolve.tasks.swebench_grading import failing_from_records

    expected = ["t.py::a", "t.py::b[x y]", "t.py::c"]
    records = [
        {"test": "t.py::a", "when": "setup", "outcome": "passed"},
        {"test": "t.py::a", "when": "call", "outcome": "passed"},
        {"test": "t.py::b[x y]", "when": "call", "outcome": "passed"},  # the harness keeps `t.py::b[x`
        {"test": "t.py::c", "when": "call", "outcome": "passed"},
        {"test": "t.py::c", "when": "teardown", "outcome": "failed"},
        {"end": 1},
    ]
    assert failing_from_records(records, ["t.py::a", "t.py::b[x", "t.py::c", "t.py::d"]) == [
        "t.py::c",
        "t.py::d",
    ]
    assert failing_from_records(records[:3], expected[:1]) == []
    assert failing_from_records([{"malformed": "PASSED t.py::a"}], expected) is None


def test_json_and_jsonl_files_read_alike(tmp_path):
    instances = load_instances(str(FIXTURE))
    as_json = tmp_path / "instances.json"
    as_json.write_text(json.dumps(instances))
    assert load_instances(str(as_json)) == instances
    with pytest.raises(TaskError, match="cannot read"):
        load_instances(str(tmp_path / "absent.jsonl"))


def test_image_name_follows_swebench_docker_hub_naming_when_the_instance_has_none():
    assert (
        instance_image({"instance_id": "django__django-10973"})
        == "swebench/sweb.eval.x86_64.django_1776_django-10973:latest"
    )
    assert instance_image({"instance_id": "x__y-1", "image": "mine:1"}) == "mine:1"


def test_an_instance_without_tests_is_refused():
    with pytest.raises(TaskError, match="FAIL_TO_PASS"):
        from evolve.tasks.swebench import instance_task

        instance_task({"instance_id": "a__b-1", "repo": "a/b", "problem_statement": "", "patch": ""}, "s")


def test_dgm_subsets_by_name():
    small, medium = SWEBENCH_SUBSETS["small"], SWEBENCH_SUBSETS["medium"]
    assert len(small) == 10 and len(medium) == 50 and not set(small) & set(medium)
    assert all("__" in i and i.rsplit("-", 1)[1].isdigit() for i in small + medium)
    assert "django__django-10973" in small


def test_suite_names_select_dataset_and_subset(monkeypatch):
    monkeypatch.setenv("EVOLVE_SWEBENCH_DATASET", str(FIXTURE))
    assert len(load_suite("swebench-verified")) == 2
    assert load_suite("swebench-lite").name == "swebench-lite"
    with pytest.raises(TaskError, match="lacks 10 chosen"):  # the fixture is not Verified
        swebench_suite("swebench-verified:small")
    with pytest.raises(TaskError, match="unknown SWE-bench subset"):
        swebench_suite("swebench-verified:tiny")
    with pytest.raises(TaskError, match="unknown SWE-bench suite"):
        swebench_suite("swebench-full")


def test_an_unreachable_hub_says_what_swebench_needs(monkeypatch):
    monkeypatch.delenv("EVOLVE_SWEBENCH_DATASET", raising=False)
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")  # nothing listens there
    with pytest.raises(SWEbenchUnavailable) as caught:
        load_suite("swebench-verified:small")
    message = str(caught.value)
    for needed in (
        "SWE-bench/SWE-bench_Verified",
        "Hugging Face hub at http://127.0.0.1:9 cannot be reached",
        "Docker Hub",
        "GB",
        "EVOLVE_SWEBENCH_DATASET",
    ):
        assert needed in message, message


def test_an_instance_without_its_eval_script_is_named_before_any_sandbox_runs():
    pytest.importorskip("swebench.harness.utils", reason="needs the swebench extra")
    from evolve.tasks.swebench import instance_task
    from evolve.tasks.swebench_grading import grade_swebench

    record = json.loads(FIXTURE.read_text().splitlines()[0])
    del record["eval_script"]
    with pytest.raises(TaskError, match="lacks 'eval_script'"):
        grade_swebench(None, instance_task(record, "s"), "")  # type: ignore[arg-type]


def test_the_tests_part_of_an_eval_script_repeats_only_its_environment_lines():
    from evolve.tasks.swebench_grading import split_eval_script

    script = (
        "#!/bin/bash\nset -uxo pipefail\nsource /opt/miniconda3/bin/activate\nexport LANG=C.UTF-8\n"
        "python -m pip install -e .\ngit apply -v - <<'EOF_1'\n--- a/t.py\n+++ b/t.py\ncd /elsewhere\n"
        "export INSIDE=heredoc\nEOF_1\n: '>>>>> Start Test Output'\npytest -rA t.py\n: '>>>>> End Test "
        "Output'\n"
    )
    prelude, tests = split_eval_script(script, ">>>>> Start Test Output")
    assert "pip install" in prelude and "pytest" not in prelude
    assert tests == (
        "set -uxo pipefail\nsource /opt/miniconda3/bin/activate\nexport LANG=C.UTF-8\n"
        ": '>>>>> Start Test Output'\npytest -rA t.py\n: '>>>>> End Test Output'\n"
    )
    with pytest.raises(TaskError, match="marker"):
        split_eval_script("pytest\n", ">>>>> Start Test Output")
