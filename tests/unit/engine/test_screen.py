"""The screen of template edits against an agent's failing own tests (evolve.engine.screen), run by the
Spectra work on process sandboxes: a tiny agent, not the seed, whose fault is a line its passing test runs
too."""

from __future__ import annotations

import json

from evolve.engine.screen import KEPT, LOG, ROUND, in_rounds
from evolve.meta.locations import Location
from evolve.meta.templates import Generated, TemplateEdit
from tests.unit.engine.spectra_cases import CALC, TESTS, own_tests_ran


def test_the_edit_that_makes_every_own_test_pass_is_kept_and_its_line_heads_the_ranking(tmp_path) -> None:
    result = own_tests_ran(tmp_path, CALC, TESTS, screen=40)
    assert result.failing_tests == ("tests/test_calc.py::test_large",)
    screened = result.screen
    assert screened.error == "" and screened.tried >= 2
    assert [(g.path, g.edit.line, g.edit.template, g.edit.change) for g in screened.kept] == [
        ("agent/calc.py", 4, "operator", "- -> +")
    ]
    kept = screened.kept[0]
    assert kept.screened and "return a + b" in kept.edit.source
    first = result.locations[0]
    assert (first.path, first.line, first.score) == ("agent/calc.py", 4, 2.0)
    assert first.evidence.startswith(
        "a template edit here (operator: - -> +) makes the 1 failing own test and every other own test pass"
    )
    verdicts = [json.loads(line) for line in (tmp_path / "logs" / LOG).read_text().splitlines()]
    assert len(verdicts) == screened.tried
    assert sum(v["fixes_failing"] for v in verdicts) == screened.fixing >= 1
    assert [v["change"] for v in verdicts if v["passes_all"]] == ["- -> +"]
    # an edit that fixes the failing test and breaks the other is tried against both and not kept
    assert any(v["fixes_failing"] and not v["passes_all"] for v in verdicts) or screened.fixing == 1
    assert result.to_json()["screen"]["kept"] == [
        {"path": "agent/calc.py", "line": 4, "template": "operator", "change": "- -> +"}
    ]
    assert (tmp_path / "code" / "agent" / "calc.py").read_text() == CALC  # the agent itself is untouched


def test_nothing_is_screened_where_no_own_test_fails_or_the_screen_is_off(tmp_path) -> None:
    passing = own_tests_ran(tmp_path / "a", CALC.replace("a - b", "a + b"), TESTS, screen=40)
    assert passing.failing_tests == () and passing.screen.tried == 0
    assert not (tmp_path / "a" / "logs" / LOG).exists()
    off = own_tests_ran(tmp_path / "b", CALC, TESTS)
    assert off.failing_tests and off.screen.tried == 0 and off.screen.kept == ()


FORGED = """import pytest


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session, exitstatus):
    session.exitstatus = 0  # every run says it passed, whatever failed
"""


def test_tests_that_claim_every_edit_passes_get_only_a_few_edits_tried_first_and_no_verdict(tmp_path) -> None:
    # The screen's verdicts are exit statuses of the agent's own tests: an agent can make every edit "pass".
    # What it gets is KEPT edits handed on as candidates, each still checked by the stages after (own tests,
    # replayed behaviour, the live re-run the graders score, the gate), and its failing test, as the probe
    # recorded it, still ranks its lines.
    result = own_tests_ran(tmp_path, CALC, TESTS, screen=40, conftest=FORGED)
    assert result.failing_tests == ("tests/test_calc.py::test_large",)
    assert len(result.screen.kept) == KEPT == result.screen.tried
    assert all(g.screened and g.location.score == 2.0 for g in result.screen.kept)


# A dispatcher whose second branch names the wrong command: "run" falls through to the default. The failing
# test read `command` = 'run' at that line; nothing else in the module says "run".
DISPATCH = """def act(command, value):
    if command == "show":
        return str(value)
    elif command == "stop":
        return value * 2
    return None
"""
DISPATCH_TESTS = (
    "from agent.calc import act\n\n\ndef test_show():\n    assert act('show', 3) == '3'\n\n\n"
    "def test_run():\n    assert act('run', 3) == 6\n"
)


def test_a_comparison_is_offered_the_value_its_failing_test_read_there_and_the_edit_is_kept(tmp_path) -> None:
    result = own_tests_ran(tmp_path, DISPATCH, DISPATCH_TESTS, screen=60)
    assert result.failing_tests == ("tests/test_calc.py::test_run",)
    kept = [(g.edit.line, g.edit.template, g.edit.change) for g in result.screen.kept]
    assert (4, "observed", "'stop' -> 'run' (a failing run read command = 'run')") in kept, kept
    (fix,) = [g for g in result.screen.kept if g.edit.template == "observed"]
    assert 'elif command == "run":' in fix.edit.source or "elif command == 'run':" in fix.edit.source


# Both tests build the request, so its line ranks below the three lines only the failing test runs; the
# failing test reads the request's "items", which that line alone writes.
REQUEST = """def request(task, size):
    body = {"task": task, "items": list(range(size))[::-1]}
    return body


def weigh(size):
    total = size * 3 + 1
    total = total - 2 * size
    return total
"""
REQUEST_TESTS = (
    "from agent.calc import request, weigh\n\n\n"
    "def test_one():\n    assert request('a', 1)['items'] == [0]\n\n\n"
    "def test_items():\n    sent = request('b', 3)\n    assert weigh(3) == 4\n"
    "    assert sent['items'] == [0, 1, 2]\n"
)


def test_the_line_holding_the_key_the_failing_test_read_is_edited_first(tmp_path) -> None:
    result = own_tests_ran(tmp_path, REQUEST, REQUEST_TESTS, screen=12)
    assert result.failing_tests == ("tests/test_calc.py::test_items",)
    verdicts = [json.loads(line) for line in (tmp_path / "logs" / LOG).read_text().splitlines()]
    assert verdicts[0]["line"] == 2, verdicts  # ranked below weigh's lines by spectra alone
    assert [g.edit.line for g in result.screen.kept][:1] == [2], verdicts
    assert "list(range(size))" in result.screen.kept[0].edit.source


# The failing test's TypeError is raised at line 2, from the call at line 9; both lines run in the passing
# test too, so spectra rank them below lines 7 and 8, which only the failing test runs.
FRAMED = """def succ(number):
    return number + 1


def act(command, value):
    if command == "next":
        note = "next"
        size = len(note)
    return succ(value)
"""
FRAMED_TESTS = (
    "from agent.calc import act\n\n\ndef test_show():\n    assert act('show', 3) == 4\n\n\n"
    "def test_next():\n    assert act('next', '3') == 4\n"
)


def test_the_lines_the_failing_tests_traceback_passes_through_are_edited_first(tmp_path) -> None:
    result = own_tests_ran(tmp_path, FRAMED, FRAMED_TESTS, screen=40)
    assert result.failing_tests == ("tests/test_calc.py::test_next",)
    verdicts = [json.loads(line) for line in (tmp_path / "logs" / LOG).read_text().splitlines()]
    lines = [verdict["line"] for verdict in verdicts]
    assert lines[0] == 2, lines  # the frame that raised
    assert lines.index(9) < min(lines.index(7), lines.index(8)), lines  # its caller before the others


# A helper's bare `return` gives `count` None, which it hands to `len`: the crash is at line 8, the None made
# at line 3, where the `returns` template gives the return its value.
NONE_ORIGIN = """def words(text):
    found = text.split()
    return


def count(text):
    items = words(text)
    return len(items)


def echo(text):
    return text
"""
NONE_TESTS = (
    "from agent.calc import count, echo\n\n\ndef test_echo():\n    assert echo('a') == 'a'\n\n\n"
    "def test_count():\n    assert count('a b') == 2\n"
)


def test_where_a_test_crashed_on_none_the_return_that_gave_it_is_edited_before_the_frames(tmp_path) -> None:
    result = own_tests_ran(tmp_path, NONE_ORIGIN, NONE_TESTS, screen=40)
    assert result.failing_tests == ("tests/test_calc.py::test_count",)
    verdicts = [json.loads(line) for line in (tmp_path / "logs" / LOG).read_text().splitlines()]
    assert verdicts[0]["line"] == 3, verdicts  # the origin, before the raising frame (8) and its caller
    first = result.screen.kept[0].edit
    assert (first.line, first.template, first.change) == (3, "returns", "return -> return found")


def test_each_lines_first_edits_are_tried_before_any_lines_later_ones() -> None:
    def made(line: int, count: int) -> list[Generated]:
        at = Location("agent/calc.py", line, 1.0, "e")
        edits = [TemplateEdit("drop", line, f"{line}.{n}", f"{line}.{n}") for n in range(count)]
        return [Generated(at, at.path, edit) for edit in edits]

    order = [g.edit.change for g in in_rounds(made(4, ROUND + 2) + made(9, 1) + made(2, ROUND + 1))]
    first = [f"4.{n}" for n in range(ROUND)] + ["9.0"] + [f"2.{n}" for n in range(ROUND)]
    assert order == first + ["4.5", "4.6", "2.5"]
