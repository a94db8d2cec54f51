"""Polyglot graders in Docker, on the fixture in the benchmark's layout (tests/data/polyglot).

Python runs in the base image (always). C++ runs in a polyglot image built from sandboxes/polyglot
with only its toolchain (g++, cmake: about a minute once, then Docker's cache), or in
$EVOLVE_POLYGLOT_IMAGE / evolve-polyglot:latest when present. Every language, in the full image
(~2 GB, ~5 minutes to build), only when EVOLVE_TEST_POLYGLOT_FULL=1.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from evolve.cli.app import app
from evolve.sandbox.factory import grading_sandbox
from evolve.tasks.check import check_suite
from evolve.tasks.grading import GradeItem, grade_in
from evolve.tasks.polyglot import LANGUAGES, POLYGLOT_IMAGE, load_polyglot

ROOT = Path(__file__).resolve().parents[3]
FIXTURE = ROOT / "tests" / "data" / "polyglot"
BUILD = ROOT / "sandboxes" / "polyglot" / "build.sh"
NAIVE_CPP = """diff --git a/leap.cpp b/leap.cpp
--- a/leap.cpp
+++ b/leap.cpp
@@ -2,4 +2,6 @@
 
 namespace leap {
 
+bool is_leap_year(int year) { return year % 4 == 0; }
+
 }  // namespace leap
"""


def cli_check(*args: str) -> dict:
    result = CliRunner().invoke(
        app, ["tasks", "check", "polyglot", "--polyglot-dir", str(FIXTURE), "--json", *args]
    )
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout.strip().splitlines()[-1])


def image_present(docker_client, name: str) -> bool:
    import docker.errors

    try:
        docker_client.images.get(name)
    except docker.errors.ImageNotFound:
        return False
    return True


def build(tag: str, *languages: str) -> str:
    done = subprocess.run(
        ["bash", str(BUILD), tag, *languages], check=False, capture_output=True, text=True, timeout=1800
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return tag


@pytest.fixture(scope="module")
def cpp_image(polyglot_cpp_image) -> str:
    return polyglot_cpp_image


def test_python_graders_in_the_base_image(base_image):
    assert cli_check("--language", "python") == {
        "suite": "polyglot",
        "tasks": 1,
        "reference_pass": 1,
        "untouched_fail": 1,
        "mismatches": [],
    }


def test_cpp_graders_in_the_polyglot_image(cpp_image):
    report = check_suite(load_polyglot(FIXTURE, ["cpp"], image=cpp_image), grading_sandbox)
    assert report.mismatches == [] and len(report.checks) == 1
    assert report.checks[0].reference.detail == "4 tests pass"  # each TEST_CASE, from Catch2's XML report


def test_a_solution_passing_only_the_enabled_tests_fails(cpp_image):
    task = load_polyglot(FIXTURE, ["cpp"], image=cpp_image).get("cpp__leap")
    with grading_sandbox(cpp_image, "naive-cpp") as sandbox:
        (grade,) = grade_in(sandbox, [GradeItem("naive", task, NAIVE_CPP)])
    assert grade.outcome == "fail", grade.output
    assert "is_leap_year(2100)" in grade.output


@pytest.mark.skipif(
    os.environ.get("EVOLVE_TEST_POLYGLOT_FULL") != "1",
    reason="set EVOLVE_TEST_POLYGLOT_FULL=1 to build the full polyglot image (~2 GB) and test all",
)
def test_every_language_in_the_full_image(docker_client, base_image):
    if not image_present(docker_client, POLYGLOT_IMAGE):
        build(POLYGLOT_IMAGE)
    summary = cli_check()
    assert summary == {
        "suite": "polyglot",
        "tasks": len(LANGUAGES),
        "reference_pass": len(LANGUAGES),
        "untouched_fail": len(LANGUAGES),
        "mismatches": [],
    }
