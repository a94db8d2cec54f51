"""The polyglot adapter on a fixture in the benchmark's layout (tests/data/polyglot): no Docker."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from evolve.tasks import load_suite
from evolve.tasks.polyglot import (
    BASE_IMAGE,
    LANGUAGES,
    POLYGLOT_IMAGE,
    enable_all_tests,
    load_polyglot,
    name_cmake_project,
    polyglot_suite,
    split_of,
)
from evolve.tasks.subsets import POLYGLOT_SUBSETS
from evolve.tasks.types import TaskError, write_files

FIXTURE = Path(__file__).resolve().parents[2] / "data" / "polyglot"


@pytest.fixture(scope="module")
def suite():
    return load_polyglot(FIXTURE)


def test_every_language_becomes_a_task_named_as_dgm_names_it(suite):
    assert sorted(t.id for t in suite) == sorted(f"{lang}__leap" for lang in LANGUAGES)
    for task in suite:
        assert task.suite == "polyglot" and task.language == task.id.split("__")[0]
        assert task.image == (BASE_IMAGE if task.language == "python" else POLYGLOT_IMAGE)
        assert task.split == split_of(task.id)


def test_tests_are_hidden_and_docs_meta_never_reach_the_agent(suite):
    expected_tests = {"python": "leap_test.py", "go": "leap_test.go", "cpp": "leap_test.cpp",
                      "rust": "tests/leap.rs", "java": "src/test/java/LeapTest.java", "javascript": "leap.spec.js"}
    for task in suite:
        test_file = expected_tests[task.language]
        assert test_file in task.hidden_tests and test_file not in task.repo
        assert not any(path.startswith(".") for path in task.repo), sorted(task.repo)
        assert b"year % 4" not in b"".join(task.repo.values())  # the example stays out of the repo


def test_statement_has_introduction_then_instructions_and_names_the_stubs(suite):
    task = suite.get("cpp__leap")
    assert task.statement.index("# Introduction") < task.statement.index("# Instructions")
    assert "`leap.cpp`, `leap.h`" in task.statement


@pytest.mark.parametrize("language", LANGUAGES)
def test_reference_patch_turns_the_stub_into_the_example(suite, tmp_path, language):
    task = suite.get(f"{language}__leap")
    repo = write_files(task.repo, tmp_path / "repo")
    (tmp_path / "ref.diff").write_text(task.reference_patch)
    subprocess.run(["git", "apply", str(tmp_path / "ref.diff")], cwd=repo, check=True, capture_output=True)
    meta = FIXTURE / language / "exercises" / "practice" / "leap" / ".meta"
    examples = [p for p in meta.rglob("*") if p.is_file() and p.name != "config.json"]
    for example in examples:
        changed = [p for p in repo.rglob(f"*{example.suffix}") if p.read_bytes() == example.read_bytes()]
        assert changed, f"{example.name} did not land in the repo"


def test_disabled_tests_are_enabled_as_the_benchmark_runs_them(suite):
    java = suite.get("java__leap").hidden_tests["src/test/java/LeapTest.java"].decode()
    assert "@Disabled(" not in java and java.count("@Test") == 3
    js = suite.get("javascript__leap").hidden_tests["leap.spec.js"].decode()
    assert "xtest(" not in js and js.count("test(") == 3
    assert "--include-ignored" in suite.get("rust__leap").test_command
    assert "EXERCISM_RUN_ALL_TESTS=1" in suite.get("cpp__leap").build_command
    assert enable_all_tests("python", b"xtest(") == b"xtest("


def test_cmake_project_is_named_after_the_exercise_not_the_directory(suite):
    cmake = suite.get("cpp__leap").repo["CMakeLists.txt"].decode()
    assert 'set(exercise "leap")' in cmake and "CMAKE_CURRENT_SOURCE_DIR} NAME" not in cmake
    indented = b"  get_filename_component(exercise ${CMAKE_CURRENT_SOURCE_DIR} NAME)\n"
    assert name_cmake_project(indented, "two-fer") == b'  set(exercise "two-fer")\n'


def test_agent_edits_of_build_files_and_read_only_files_never_reach_grading(suite):
    go = suite.get("go__leap")
    assert {"go.mod", "cases_test.go"} <= set(go.hidden_tests) and "cases_test.go" in go.repo
    assert go.is_protected("go.mod") and go.is_protected("cases_test.go") and not go.is_protected("leap.go")
    cpp = suite.get("cpp__leap")
    assert cpp.is_protected("CMakeLists.txt") and cpp.is_protected("test/catch.hpp")
    assert not cpp.is_protected("leap.cpp")


def test_language_filter_and_errors(tmp_path):
    assert [t.id for t in load_polyglot(FIXTURE, ["go", "rust"])] == ["go__leap", "rust__leap"]
    with pytest.raises(TaskError, match="unknown polyglot language"):
        load_polyglot(FIXTURE, ["cobol"])
    with pytest.raises(TaskError, match="no polyglot checkout"):
        load_polyglot(tmp_path / "absent")
    with pytest.raises(TaskError, match="holds no exercises"):
        load_polyglot(tmp_path)


def test_suite_by_name_needs_a_checkout(monkeypatch):
    monkeypatch.delenv("EVOLVE_POLYGLOT_DIR", raising=False)
    with pytest.raises(TaskError, match="--polyglot-dir"):
        load_suite("polyglot")
    assert len(load_suite("polyglot", polyglot_dir=FIXTURE)) == len(LANGUAGES)
    monkeypatch.setenv("EVOLVE_POLYGLOT_DIR", str(FIXTURE))
    assert len(load_suite("polyglot")) == len(LANGUAGES)


def test_dgm_subsets_select_by_name_and_language(tmp_path):
    assert len(POLYGLOT_SUBSETS["small"]) == 10 and len(POLYGLOT_SUBSETS["medium"]) == 50
    python_small = [i for i in POLYGLOT_SUBSETS["small"] if i.startswith("python__")]
    for task_id in python_small:  # a checkout that holds just those exercises
        shutil.copytree(FIXTURE / "python" / "exercises" / "practice" / "leap",
                        tmp_path / "python" / "exercises" / "practice" / task_id.split("__")[1])
    chosen = polyglot_suite("polyglot:small", tmp_path, ["python"])
    assert [t.id for t in chosen] == python_small
    with pytest.raises(TaskError, match="lacks"):
        polyglot_suite("polyglot:small", tmp_path)
    with pytest.raises(TaskError, match="unknown polyglot subset"):
        polyglot_suite("polyglot:huge", tmp_path)


def test_a_java_reference_of_several_classes_adds_each_beside_the_solution(tmp_path):
    exercise = tmp_path / "java" / "exercises" / "practice" / "leap"
    shutil.copytree(FIXTURE / "java" / "exercises" / "practice" / "leap", exercise)
    (exercise / ".meta" / "src" / "reference" / "java" / "Year.java").write_text("record Year(int value) {}\n")
    config = json.loads((exercise / ".meta" / "config.json").read_text())
    config["files"]["example"].append(".meta/src/reference/java/Year.java")
    (exercise / ".meta" / "config.json").write_text(json.dumps(config))
    task = load_polyglot(tmp_path).get("java__leap")
    repo = write_files(task.repo, tmp_path / "repo")
    (tmp_path / "ref.diff").write_text(task.reference_patch)
    subprocess.run(["git", "apply", str(tmp_path / "ref.diff")], cwd=repo, check=True, capture_output=True)
    assert (repo / "src/main/java/Year.java").read_text() == "record Year(int value) {}\n"
    assert "year % 400" in (repo / "src/main/java/Leap.java").read_text()


def test_a_rust_reference_brings_its_own_manifest(tmp_path):
    exercise = tmp_path / "rust" / "exercises" / "practice" / "leap"
    shutil.copytree(FIXTURE / "rust" / "exercises" / "practice" / "leap", exercise)
    manifest = '[package]\nedition = "2021"\nname = "leap"\nversion = "1.0.0"\n\n[dependencies]\nanyhow = "1.0"\n'
    (exercise / ".meta" / "Cargo-example.toml").write_text(manifest)
    task = load_polyglot(tmp_path).get("rust__leap")
    assert "diff --git a/Cargo.toml b/Cargo.toml" in task.reference_patch and "+anyhow" in task.reference_patch
