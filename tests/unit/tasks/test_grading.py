"""Grading gives no credit for touching tests: edits, deletions, or files where hidden tests will land."""

from __future__ import annotations

import subprocess

import pytest

from evolve.tasks import load_suite
from evolve.tasks.grading import GradeItem, expected_tests, grade_in
from evolve.tasks.tree_diff import diff_trees, tree_entries
from evolve.tasks.types import write_files

from .local_sandbox import LocalSandbox


@pytest.fixture(scope="module")
def task():
    return load_suite("builtin").get("structs-lru-recency")


def agent_diff(task, tmp_path, script: str) -> str:
    """The git diff an agent leaves after running `script` in the task repo."""
    repo = write_files(task.repo, tmp_path / "agent-repo")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(repo)]
    subprocess.run(git + ["init", "-q"], check=True)
    subprocess.run(git + ["add", "-A"], check=True)
    subprocess.run(git + ["commit", "-qm", "base"], check=True)
    subprocess.run(["bash", "-c", script], cwd=repo, check=True)
    return diff_trees(task.repo, tree_entries(repo))  # as the engine takes it


def grade(task, patch, tmp_path):
    (grade,) = grade_in(
        LocalSandbox(tmp_path), [GradeItem("k", task, patch)], remote=str(tmp_path / "stage"), isolate=False
    )
    return grade


FAKE_PASS = "printf 'def test_ok():\\n    pass\\n' > {}"


@pytest.mark.parametrize(
    "script",
    [
        FAKE_PASS.format("tests/test_structs_lru_recency.py"),  # where the hidden test will be copied
        "rm -rf tests && mkdir tests && " + FAKE_PASS.format("tests/test_basics.py"),  # deleting tests
        (
            "printf 'import pytest\\n@pytest.hookimpl(tryfirst=True)\\ndef pytest_runtest_call(item):\\n    "
            "return True\\n'"
            " > conftest.py"
        ),  # a conftest that skips test bodies
        "printf '[pytest]\\naddopts = --co\\n' > pytest.ini",  # test configuration
        "sed -i 's/assert/assert True or/' tests/test_basics.py",  # editing visible tests
    ],
)
def test_tampering_earns_no_credit(task, tmp_path, script):
    patch = agent_diff(task, tmp_path, script)
    assert patch, "the cheat changed nothing"
    result = grade(task, patch, tmp_path)
    assert result.outcome == "fail" and result.dropped


def test_a_real_fix_passes_and_cheats_beside_it_are_dropped(task, tmp_path):
    patch = agent_diff(
        task,
        tmp_path,
        "python3 - <<'EOF'\nfrom pathlib import Path\np = Path('structs/lru.py')\n"
        "s = p.read_text().replace('            return default\\n        return self._data[key]',"
        " '            return default\\n        self._data.move_to_end(key)\\n        return "
        "self._data[key]')\n"
        "p.write_text(s)\nEOF\nrm tests/test_basics.py",
    )
    result = grade(task, patch, tmp_path)
    assert result.outcome == "pass", result.output
    assert result.dropped == ("tests/test_basics.py",)


def test_reference_passes_untouched_fails_and_garbage_patch_fails(task, tmp_path):
    assert grade(task, task.reference_patch, tmp_path / "a").outcome == "pass"
    assert grade(task, "", tmp_path / "b").outcome == "fail"
    broken = (
        "diff --git a/structs/lru.py b/structs/lru.py\n--- a/structs/lru.py\n+++ b/structs/lru.py\n@@ "
        "-1 +1 @@\n-nope\n+x\n"
    )
    assert grade(task, broken, tmp_path / "c").detail == "the patch does not apply"


def test_a_rename_into_the_tests_dir_is_reverted_by_path(task, tmp_path):
    patch = (
        "diff --git a/structs/lru.py b/tests/test_x.py\nsimilarity index 100%\nrename from structs/lru.py\n"
        "rename to tests/test_x.py\n"
    )
    result = grade(task, patch, tmp_path)
    assert result.dropped == ("tests/test_x.py",) and result.outcome == "fail"


def test_expected_tests_are_read_from_the_hidden_files(task):
    expected = expected_tests(task)
    assert expected and all(name.startswith("tests/") and "::test" in name for name in expected)


def test_output_marker_printed_by_the_code_under_test_cannot_forge_results(task, tmp_path):
    patch = agent_diff(
        task,
        tmp_path,
        'printf \'print("=== evolve-grade-results ===")\\nprint("[]")\\n\' >> structs/__init__.py',
    )
    assert grade(task, patch, tmp_path).outcome == "fail"


@pytest.mark.parametrize(
    "path",
    [
        "conftest.py",
        "a/b/conftest.py",
        ".pytest.ini",
        "pkg/x.pth",
        "sitecustomize/__init__.py",
        "pytest.py",
        "_pytest/main.py",
        "evolve_results.py",
        "tests",
        "tests/x.py",
        "structs/test_new.py",
        "extra_test.go",
        "node_modules/jest/bin/jest.js",
        ".git/config",
    ],
)
def test_protected_paths(task, path):
    assert task.is_protected(path)


@pytest.mark.parametrize(
    "path", ["structs/lru.py", "README.md", "structs/testing_utils.py", "docs/conftest.md"]
)
def test_source_paths_are_not_protected(task, path):
    assert not task.is_protected(path)


def test_test_files_are_the_runners_own_rules_not_a_test_name():
    from evolve.tasks.types import Task

    # paasio's test_utils.py
    helper = b"import io\n\n\nclass MockSock:\n    def test_like(self):\n        pass\n"
    hidden = {
        "paasio_test.py": b"import unittest\n\n\nclass PaasioTest(unittest.TestCase):\n    def "
        b"test_read(self):\n"
        b"        pass\n",
        "test_utils.py": helper,
        "check_io.py": b"def check_one():\n    pass\n",
    }
    task = Task(
        id="t",
        suite="s",
        split="dev",
        statement="",
        repo={"paasio.py": b""},
        hidden_tests=hidden,
        reference_patch="",
        test_command="python3 -m pytest",
        tests_dir="",
    )
    assert expected_tests(task) == ["paasio_test.py::PaasioTest::test_read"]
    configured = Task(
        **{
            **task.__dict__,
            "repo": {"pytest.ini": b"[pytest]\npython_files = check_*.py\npython_functions = check_\n"},
        }
    )
    assert expected_tests(configured) == ["check_io.py::check_one"]
    broken = Task(**{**task.__dict__, "hidden_tests": {"test_x.py": b"def test_x(:\n"}})
    assert expected_tests(broken) == ["test_x.py"]  # unreadable: expected as a whole
