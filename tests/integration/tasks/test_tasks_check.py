"""`evolve tasks check` in Docker: every reference passes and every untouched repo fails."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from evolve.cli.app import app


def check(suite: str) -> dict:
    result = CliRunner().invoke(app, ["tasks", "check", suite, "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_builtin_graders(base_image):
    summary = check("builtin")
    assert summary["tasks"] >= 30 and summary["mismatches"] == []
    assert summary["reference_pass"] == summary["untouched_fail"] == summary["tasks"]


def test_humaneval_graders(base_image):
    assert check("humaneval") == {
        "suite": "humaneval",
        "tasks": 164,
        "reference_pass": 164,
        "untouched_fail": 164,
        "mismatches": [],
    }


def test_a_broken_task_is_a_mismatch_and_exits_nonzero(base_image, tmp_path):
    import shutil

    from evolve.tasks import tasks_root

    suite = tmp_path / "mini"
    shutil.copytree(tasks_root() / "builtin" / "structs-heap-pop", suite / "structs-heap-pop")
    (suite / "structs-heap-pop" / "solution.patch").write_text("")  # the reference no longer fixes anything
    result = CliRunner().invoke(app, ["tasks", "check", str(suite), "--json"])
    assert result.exit_code == 1
    assert json.loads(result.stdout.strip().splitlines()[-1])["mismatches"] == ["structs-heap-pop"]
