"""A short `evolve run` on two polyglot C++ exercises (the fixture's `leap` and `reverse-string`) in the
C++ polyglot image, with the seed agent and scripted models: each evaluation solves in that image and is
graded by the polyglot grader from Catch2's per-test report. The six-language image stays behind
EVOLVE_TEST_POLYGLOT_FULL=1 (tests/integration/tasks/test_polyglot.py)."""

import shutil
from pathlib import Path

import pytest

from evolve.launch import run_evolution
from evolve.standins.models import RoutedModel
from tests.integration.scripted import DONE, evolution_config, scripted_models

DATA = Path(__file__).resolve().parents[2] / "data"
LEAP_DIR = DATA / "polyglot" / "cpp" / "exercises" / "practice" / "leap"
EXERCISES = (LEAP_DIR, DATA / "polyglot-cpp-run" / "cpp" / "exercises" / "practice" / "reverse-string")
DEV, HELDOUT = "cpp__reverse-string", "cpp__leap"
"""One exercise in each split (by id hash)."""
LEAP = (
    "```bash\ncat > leap.cpp <<'EOF'\n#include \"leap.h\"\n\nnamespace leap {\n\nbool is_leap_year(int year) "
    "{ return year % 4 == 0 && (year % 100 != 0 || year % 400 == 0); }\n\n}  // namespace leap\nEOF\n```"
)
ECHO = (
    "```bash\ncat > reverse_string.cpp <<'EOF'\n#include \"reverse_string.h\"\n\nnamespace reverse_string "
    "{\n\n"
    "std::string reverse_string(const std::string& text) { return text; }\n\n}  // namespace "
    "reverse_string\nEOF\n```"
)
"""Wrong: passes the tests of the empty string and the palindrome only."""
SOLVE = RoutedModel([("leap year", LEAP), ("Reverse a given string", ECHO)], DONE)


@pytest.mark.docker
def test_a_scripted_run_on_two_cpp_exercises_is_graded_per_test(tmp_path, polyglot_cpp_image, monkeypatch):
    for exercise in EXERCISES:
        target = shutil.copytree(
            exercise, tmp_path / "checkout" / "cpp" / "exercises" / "practice" / exercise.name
        )
        if exercise != LEAP_DIR:  # the build and the Catch2 stand-in every C++ exercise shares: leap's
            shutil.copy(LEAP_DIR / "CMakeLists.txt", target)
            shutil.copytree(LEAP_DIR / "test", target / "test")
    monkeypatch.setenv("EVOLVE_POLYGLOT_IMAGE", polyglot_cpp_image)
    config = evolution_config(
        tmp_path / "archive",
        "polyglot-cpp",
        3,
        sandbox={"memory": "1g"},
        tasks={"suite": "polyglot", "polyglot_dir": str(tmp_path / "checkout")},
        budget={"evaluations": 1, "agent_steps": 3, "job_tokens": 50000},
        policy={"name": "greedy"},
    )
    run, outcome = run_evolution(config, models=scripted_models(solve=SOLVE))

    outcomes = {e.task: e for e in run.evaluations()}
    assert set(outcomes) == {DEV, HELDOUT}, outcome
    wrong, right = outcomes[DEV], outcomes[HELDOUT]
    assert (wrong.outcome, wrong.split) == ("fail", "dev")
    assert (Path(wrong.log_path) / "grade.log").read_text().startswith("fail: 1 test(s) failed: a_word")
    assert (right.outcome, right.split) == ("pass", "heldout")
    assert (Path(right.log_path) / "grade.log").read_text().startswith("pass: 4 tests pass")
