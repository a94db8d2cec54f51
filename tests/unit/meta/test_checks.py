"""Where the agent chose a check that passed while its task failed (evolve.meta.checks)."""

from __future__ import annotations

from evolve.meta.checks import weak_checks
from evolve.meta.evidence import TaskRun, Turn, weak_check
from evolve.meta.profile import Markers

MARKERS = Markers.of({"check": "Tests: {command} ->", "exit": "(exit {code})"})

CHOOSER = """TESTS = "python3 -m pytest -q -x"


def check(tests: bool) -> str:
    if tests:
        return TESTS + " --doctest-modules"
    return "python3 -m compileall -q ."
"""


def _run(outcome: str, *outputs: str) -> TaskRun:
    turns = tuple(Turn("```bash\nmake\n```", output) for output in outputs)
    return TaskRun("t", outcome, turns, markers=MARKERS)


def _agent(tmp_path):
    (tmp_path / "agent").mkdir()
    (tmp_path / "agent" / "checks.py").write_text(CHOOSER)
    return tmp_path


def test_the_last_own_check_that_passed_in_a_failed_run_is_weak() -> None:
    compiled = _run("fail", "Tests: python3 -m compileall -q . -> (exit 0)")
    assert weak_check(compiled) == "python3 -m compileall -q ."
    failed_then_passed = _run("fail", "Tests: make test -> (exit 1)", "Tests: make -> (exit 0)")
    assert weak_check(failed_then_passed) == "make"
    assert weak_check(_run("fail", "Tests: make -> (exit 0)", "Tests: make test -> (exit 2)")) is None
    assert weak_check(_run("pass", "Tests: make -> (exit 0)")) is None
    assert weak_check(_run("timeout", "Tests: make -> (exit 0)")) is None
    unmarked = TaskRun("t", "fail", (Turn("x", "Tests: make -> (exit 0)"),))
    assert weak_check(unmarked) is None  # an agent that declares no check marker has none read


def test_the_text_of_a_passing_check_ranks_by_the_share_of_failed_runs_that_checked_so(tmp_path) -> None:
    code = _agent(tmp_path)
    runs = [
        _run("fail", "Tests: python3 -m compileall -q . -> (exit 0)"),
        _run("fail", "Tests: python3 -m compileall -q . -> (exit 0)"),
        _run("fail", "Tests: python3 -m pytest -q -x --doctest-modules -> (exit 0)"),
        _run("fail", "Tests: python3 -m pytest -q -x -> (exit 1)"),  # its check failed: not weak
        _run("pass", "Tests: python3 -m compileall -q . -> (exit 0)"),
    ]
    found = weak_checks(code, runs)
    assert [(loc.path, loc.line, loc.score) for loc in found] == [
        ("agent/checks.py", 7, 0.5),
        ("agent/checks.py", 1, 0.25),  # the constant the third run's command was built from
        ("agent/checks.py", 6, 0.25),
    ]
    assert "2 of 4 failed evaluations" in found[0].evidence
    assert "python3 -m compileall -q ." in found[0].evidence


def test_no_passing_check_ranks_nothing(tmp_path) -> None:
    code = _agent(tmp_path)
    assert weak_checks(code, [_run("fail", "Tests: python3 -m compileall -q . -> (exit 1)")]) == []
    assert weak_checks(code, [_run("pass", "Tests: python3 -m compileall -q . -> (exit 0)")]) == []
