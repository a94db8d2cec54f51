"""Suites load into the one Task type; the builtin suite is well formed and its split is fixed."""

from __future__ import annotations

import subprocess
from collections import Counter

import pytest

from evolve.tasks import TaskError, load_suite, suite_names
from evolve.tasks.directory import load_dir_suite
from evolve.tasks.types import write_files


@pytest.fixture(scope="module")
def builtin():
    return load_suite("builtin")


def test_builtin_size_split_and_tiers(builtin):
    assert len(builtin) >= 30
    assert len(builtin.split("dev")) + len(builtin.split("heldout")) == len(builtin)
    assert len(builtin.split("heldout")) >= 8
    assert Counter(t.difficulty for t in builtin).keys() == {"easy", "medium", "hard"}
    assert len({t.tags[0] for t in builtin}) >= 5  # a handful of projects


def test_builtin_split_is_pinned(builtin):
    heldout = {t.id for t in builtin.split("heldout")}
    assert {"structs-heapsort", "shop-bulk-discount", "inifile-interpolation", "todo-summary"} <= heldout
    assert "textkit-to-roman" not in heldout


def test_hidden_tests_are_not_in_the_repo(builtin):
    for task in builtin:
        assert task.hidden_tests and not set(task.hidden_tests) & set(task.repo), task.id
        assert all(task.is_protected(path) for path in task.hidden_tests)
        assert task.statement.strip() and task.reference_patch.startswith("diff --git")


def test_reference_patches_apply_to_the_repos(builtin, tmp_path):
    for task in builtin:
        repo = write_files(task.repo, tmp_path / task.id)
        done = subprocess.run(
            ["git", "apply", "--check", "-"],
            input=task.reference_patch,
            text=True,
            cwd=repo,
            capture_output=True,
            check=False,
        )
        assert done.returncode == 0, (task.id, done.stderr)


def test_humaneval_has_164_problems_with_a_fixed_split():
    suite = load_suite("humaneval")
    assert len(suite) == 164
    assert len(suite.split("heldout")) == 32
    task = suite.get("HumanEval-0")
    assert task.split == "dev" and suite.get("HumanEval-4").split == "heldout"
    assert "has_close_elements" in task.statement
    assert b"raise NotImplementedError" in task.repo["solution.py"]
    assert b"def check(candidate)" in task.hidden_tests["tests/test_solution.py"]


def test_humaneval_wide_holds_out_more_than_100_of_the_same_problems():
    wide, narrow = load_suite("humaneval-wide"), load_suite("humaneval")
    assert (len(wide.split("dev")), len(wide.split("heldout"))) == (55, 109)
    assert wide.get("HumanEval-3").split == "dev" and wide.get("HumanEval-4").split == "heldout"
    assert (
        wide.get("HumanEval-7").repo == narrow.get("HumanEval-7").repo
        and wide.get("HumanEval-7").suite == "humaneval-wide"
    )


def test_unknown_suite_and_split():
    assert {"builtin", "humaneval"} <= set(suite_names())
    with pytest.raises(TaskError, match="unknown suite"):
        load_suite("nope")
    with pytest.raises(TaskError, match="unknown split"):
        load_suite("builtin").split("test")


def test_malformed_task_toml_names_the_file(tmp_path):
    task = tmp_path / "suite" / "t1"
    (task / "repo").mkdir(parents=True)
    (task / "tests").mkdir()
    (task / "task.toml").write_text('id = "t1"\nstatement = "s.md"\nsplit = "dev"\n')
    with pytest.raises(TaskError, match="t1/task.toml: missing key 'test_command'"):
        load_dir_suite(tmp_path / "suite")
