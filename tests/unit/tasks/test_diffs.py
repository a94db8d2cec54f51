"""Reference patches built in memory must apply with `git apply`, as the grader applies them."""

from __future__ import annotations

import subprocess

import pytest

from evolve.tasks.diffs import file_diff, files_diff
from evolve.tasks.types import read_files, write_files

CASES = {
    "modified": ({"a.py": b"one\ntwo\nthree\n"}, {"a.py": b"one\n2\nthree\n"}),
    "created": ({}, {"pkg/new.py": b"x = 1\n"}),
    "no newline before": ({"a.txt": b"a\nb"}, {"a.txt": b"a\nb\nc\n"}),
    "no newline after": ({"a.txt": b"a\nb\n"}, {"a.txt": b"a\nc"}),
    "emptied": ({"a.txt": b"a\n"}, {"a.txt": b""}),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_files_diff_applies_with_git(tmp_path, name):
    old, new = CASES[name]
    repo = write_files({"keep.txt": b"kept\n", **old}, tmp_path / "repo")
    (tmp_path / "p.diff").write_text(files_diff(old, new))
    subprocess.run(["git", "apply", str(tmp_path / "p.diff")], cwd=repo, check=True, capture_output=True)
    assert read_files(repo) == {"keep.txt": b"kept\n", **new}


def test_equal_files_give_no_diff():
    assert file_diff("a", b"same\n", b"same\n") == "" and files_diff({"a": b"x"}, {"a": b"x"}) == ""
