"""Ochiai ranking of the agent's lines (evolve.meta.spectra) on hand-made spectra, and the readers of what
the coverage probe wrote (the agent's to write: malformed data is skipped, never raised)."""

from __future__ import annotations

import json

import pytest

from evolve.meta.locations import Location
from evolve.meta.spectra import (
    LINES_BYTES,
    TEST_RECORD_CHARS,
    TOOL_RECORD_CHARS,
    OwnTest,
    Spectrum,
    ToolOutput,
    failure_line,
    ochiai,
    rank,
    rank_own_tests,
    reached_chars,
    read_lines,
    read_own_tests,
    read_tools,
    read_values,
    with_values,
)

A, B, C, D = ("a.py", 1), ("a.py", 2), ("b/c.py", 7), ("a.py", 3)


def _spectrum(failed: bool, *lines: tuple[str, int]) -> Spectrum:
    return Spectrum(failed, frozenset(lines))


SPECTRA = [
    _spectrum(True, A, B),
    _spectrum(True, A, B, C),
    _spectrum(True, A, C),
    _spectrum(False, B, C, D),
    _spectrum(False, C, D),
]
"""Three failing runs, two passing: A only failing ones ran, B two failing and one passing, C every run
but one failing, D only passing ones."""


def test_ochiai_is_failing_runs_over_the_root_of_all_failing_times_all_runs_of_the_line() -> None:
    assert ochiai(3, 0, 0) == 1.0
    assert ochiai(2, 1, 1) == pytest.approx(2 / 3)
    assert ochiai(2, 2, 1) == pytest.approx(2 / (3 * 4) ** 0.5)
    assert ochiai(0, 5, 3) == 0.0


def test_lines_rank_by_ochiai_and_a_line_no_failing_run_ran_is_not_ranked() -> None:
    ranked = rank(SPECTRA)
    assert [(location.path, location.line) for location in ranked] == [A, B, C]
    assert [location.score for location in ranked] == [
        1.0,
        pytest.approx(2 / 3, abs=1e-4),
        pytest.approx(2 / 12**0.5, abs=1e-4),
    ]
    assert ranked[0].evidence == "run by 3 of 3 failing replays and 0 of 2 passing ones (Ochiai 1.00)"
    assert [(location.path, location.line) for location in rank(SPECTRA, limit=1)] == [A]
    assert rank([s for s in SPECTRA if not s.failed]) == []  # no failure: nothing to localize


def test_ties_rank_in_turns_by_file_so_the_limit_cuts_no_file_out() -> None:
    ranked = rank([_spectrum(True, C, B, A), _spectrum(False, D)])
    assert [(location.path, location.line) for location in ranked] == [A, C, B]
    assert [
        (location.path, location.line)
        for location in rank([_spectrum(True, C, B, A), _spectrum(False, D)], limit=2)
    ] == [A, C]


def test_a_line_whose_command_output_never_reached_the_model_is_kept_beyond_the_limit() -> None:
    lost = ToolOutput(C, chars=2340, traceback=True, countable=2000, reached=0, failed=True)
    passed = ToolOutput(B, chars=50, traceback=False, countable=50, reached=0, failed=False)
    ranked = rank(SPECTRA, [lost, passed], limit=1)
    assert [(location.path, location.line) for location in ranked] == [A, C]
    assert ranked[1].evidence.endswith(
        "the 1 command it ran in failing replays produced 2,340 chars incl. "
        "1 traceback; of their non-blank lines' 2,000 chars, 0 reached the model"
    )
    whole = ToolOutput(C, chars=20, traceback=False, countable=18, reached=18, failed=True)
    assert "command" not in rank(SPECTRA, [whole])[2].evidence  # all of it reached the model: nothing to say


def test_output_reaches_the_model_line_by_line_whatever_surrounds_it() -> None:
    sent = "You ran it. Output:\n  1 passed\n(exit 0)"
    assert reached_chars("1 passed\n\nTraceback (most recent call last)\n", sent) == (8 + 33, 8)


AGENT_LINES = {("a.py", n) for n in range(1, 10)}


def test_a_coverage_file_keeps_the_agent_lines_and_skips_what_is_malformed() -> None:
    data = "a.py\t1\na.py\t2\ngarbage\na.py\tx\n/etc/passwd\t1\na.py\t99\na.py\t\u0663\na.py\t3".encode()
    assert read_lines(data, AGENT_LINES.__contains__) == {("a.py", 1), ("a.py", 2), ("a.py", 3)}


def test_a_coverage_file_over_its_bound_or_not_text_is_skipped_whole() -> None:
    assert read_lines(b"a.py\t1\n" * (LINES_BYTES // 7 + 1), AGENT_LINES.__contains__) is None
    assert read_lines(b"a.py\t1\n\xff\xfe", AGENT_LINES.__contains__) is None
    assert read_lines(b"", AGENT_LINES.__contains__) == frozenset()


def test_tool_records_of_the_wrong_shape_are_skipped() -> None:
    good = {
        "path": "a.py",
        "line": 2,
        "chars": 30,
        "returncode": 1,
        "command": "python3  -c\n'raise'",
        "text": "Traceback (most recent call last)\nboom",
    }
    rows = [
        json.dumps(good),
        "{not json",
        "[1, 2]",
        json.dumps({**good, "line": True}),
        json.dumps({**good, "chars": -1}),
        json.dumps({**good, "path": "elsewhere.py"}),
        json.dumps({**good, "text": 3}),
        json.dumps({**good, "text": "x" * TOOL_RECORD_CHARS}),
        "[" * 100_000,
    ]
    (output,) = read_tools("\n".join(rows).encode(), AGENT_LINES.__contains__, "boom", failed=True)
    assert output == ToolOutput(
        ("a.py", 2),
        30,
        True,
        len("Traceback (most recent call last)boom"),
        4,
        True,
        exit=1,
        error="boom",
        command="python3 -c 'raise'",
    )
    (unrecorded,) = read_tools(
        json.dumps({**good, "returncode": "1"}).encode(), AGENT_LINES.__contains__, "", failed=True
    )
    assert (unrecorded.exit, unrecorded.error) == (
        None,
        "",
    )  # an exit status that is not a number says nothing
    assert read_tools(b"\xff", AGENT_LINES.__contains__, "", failed=True) == []


def test_a_line_every_replay_ran_is_left_out_where_a_passing_replay_tells_the_runs_apart() -> None:
    everywhere = [_spectrum(True, A, B), _spectrum(True, A, B), _spectrum(False, A, C)]
    assert [(loc.path, loc.line) for loc in rank(everywhere)] == [B]
    # a search that tries every line it is given (the screen) gets it too, after every line that contrasts
    assert [(loc.path, loc.line) for loc in rank(everywhere, shared=True)] == [B, A]


def test_without_a_passing_replay_only_lines_with_tool_output_evidence_are_ranked() -> None:
    """Nothing contrasts failing runs alone: Ochiai would put the code every run shares (an import, line 1
    of a package) first."""
    only_failing = [_spectrum(True, A, B, C), _spectrum(True, A, C)]
    assert rank(only_failing) == []
    lost = ToolOutput(C, chars=900, traceback=True, countable=800, reached=0, failed=True)
    assert [(loc.path, loc.line) for loc in rank(only_failing, [lost])] == [C]


def test_commands_that_exit_non_zero_are_said_beside_a_ranked_line_but_rank_nothing_alone() -> None:
    # The model asks for a command the sandbox lacks: that is the command's doing (the model chose it), and
    # the line that ran it did its job; it reached the model whole. Where the spectra rank the line, the
    # exits are its evidence; without a passing run to contrast, they do not make it suspicious.
    missing = ToolOutput(
        B, 40, False, 40, 40, True, 127, "bash: line 1: python: command not found", "bash -c python x.py"
    )
    other = ToolOutput(B, 10, False, 10, 10, True, exit=2, error="ls: cannot access 'x'")
    fine = ToolOutput(C, 10, False, 10, 10, True, exit=0)
    passing = ToolOutput(B, 10, False, 10, 10, False, exit=1, error="not counted: a passing run")
    tools = [missing, missing, other, fine, passing]
    only_failing = [_spectrum(True, A, B, C), _spectrum(True, A, B, C)]
    assert rank(only_failing, tools) == []
    ranked = rank([*only_failing, _spectrum(False, A, C)], tools)
    assert [(loc.path, loc.line) for loc in ranked] == [B]
    assert ranked[0].evidence.endswith(
        "3 of the 3 commands it ran in failing replays exited non-zero "
        '(2× "bash: line 1: python: command not found", e.g. from "bash -c python x.py")'
    )


def _test_record(test: str, failed: bool, lines: dict, message: str = "") -> str:
    return json.dumps({"test": test, "failed": failed, "message": message, "lines": lines})


def test_own_tests_rank_the_line_only_the_failing_test_ran_first_and_say_how_it_failed() -> None:
    data = "\n".join(
        [
            _test_record("t.py::test_small", False, {"a.py": [1, 2, 4]}),
            _test_record(
                "t.py::test_large",
                True,
                {"a.py": [1, 2, 3]},
                "    def test\n>   assert 9 == 13\nE   assert 9 == 13\n",
            ),
            _test_record("t.py::test_other", False, {"b/c.py": [7]}),
        ]
    ).encode()
    runs = read_own_tests(data, lambda line: True)
    assert [(run.test, run.failed) for run in runs] == [
        ("t.py::test_small", False),
        ("t.py::test_large", True),
        ("t.py::test_other", False),
    ]
    ranked = rank_own_tests(runs)
    assert [(loc.path, loc.line) for loc in ranked][:1] == [("a.py", 3)]
    assert ranked[0].score == 1.0
    assert "run by 1 of 1 failing own tests and 0 of 2 passing ones" in ranked[0].evidence
    assert "failing there: t.py::test_large (assert 9 == 13)" in ranked[0].evidence
    assert ranked[0].tests == ("t.py::test_large",)  # as data too: the repair shows the test
    assert rank_own_tests([run for run in runs if not run.failed]) == []  # nothing failed: nothing ranked


def test_own_test_records_of_the_wrong_shape_are_skipped_and_a_test_counts_once() -> None:
    good = _test_record("t.py::a", True, {"a.py": [1, "2", 3]})
    rows = [
        good,
        _test_record("t.py::a", False, {"a.py": [9]}),  # a second record of one test
        json.dumps({"test": "t.py::b", "failed": "yes", "message": "", "lines": {}}),
        json.dumps({"test": "t.py::c", "failed": False, "message": "", "lines": []}),
        "[1, 2]",
        "{not json",
        "x" * (TEST_RECORD_CHARS + 1),
    ]
    runs = read_own_tests("\n".join(rows).encode(), lambda line: line != ("a.py", 3))
    assert [(run.test, run.failed, sorted(run.lines)) for run in runs] == [("t.py::a", True, [("a.py", 1)])]
    assert read_own_tests(b"\xff\xfe", lambda line: True) == []


def test_a_failing_tests_values_at_a_line_join_its_evidence_and_values_of_the_wrong_shape_are_skipped() -> (
    None
):
    values = {
        "a.py": {
            "3": [["a", "11"], ["b", "2"], ["x" * 500, "y" * 500], ["bad"], 7],
            "9": [["not", "ran"]],
            "x": [["no", "line"]],
            "1" * 5000: [["too", "long"]],
        },
        "b.py": "not a mapping",
    }
    record = json.loads(_test_record("t.py::test_large", True, {"a.py": [1, 3]}, "E   assert 9 == 13\n"))
    data = json.dumps({**record, "values": values}).encode()
    (run,) = read_own_tests(data, lambda line: True)
    assert run.values == {("a.py", 3): (("a", "11"), ("b", "2"), ("x" * 100, "y" * 100))}
    passing = OwnTest("t.py::test_small", False, "", frozenset({("a.py", 4)}))
    ranked = sorted(rank_own_tests([run, passing]), key=lambda location: -location.line)
    assert [(location.path, location.line) for location in ranked] == [("a.py", 3), ("a.py", 1)]
    assert ranked[0].evidence.endswith(
        f"; as t.py::test_large ran it: a = 11, b = 2, {'x' * 100} = {'y' * 100}"
    )
    assert "ran it" not in ranked[1].evidence  # none recorded at line 1


def test_a_replays_values_are_read_at_the_lines_it_ran_once_each_and_bounded() -> None:
    rows = [
        {"path": "a.py", "line": 3, "values": [["n", "0"], ["limit", "'x'"]]},
        {"path": "a.py", "line": 3, "values": [["n", "second record of the line"]]},
        {"path": "a.py", "line": 9, "values": [["m", "a line it did not run"]]},
        {"path": "a.py", "line": "4", "values": [["k", "a line number as text"]]},
        {"path": "b/c.py", "line": 7, "values": [["v" * 300, "w"], "not a pair"] + [["x", "y"]] * 9},
    ]
    data = "\n".join(json.dumps(row) for row in rows).encode() + b"\n{broken\n" + b"x" * (9 << 10)
    found = read_values(data, {A, D, ("a.py", 4), C})
    assert found == {D: (("n", "0"), ("limit", "'x'")), C: (("v" * 100, "w"), ("x", "y"), ("x", "y"))}
    assert read_values(b"\xff", {A}) == {}
    located = with_values(Location("a.py", 3, 1.0, "run by 1 of 1 failing replays"), "the replay", found[D])
    assert located.evidence == "run by 1 of 1 failing replays; as the replay ran it: n = 0, limit = 'x'"


def test_a_failure_reads_as_its_last_error_line() -> None:
    assert (
        failure_line(">   assert f(1) == 2\nE   assert 3 == 2\nE    +  where 3 = f(1)\n") == "assert 3 == 2"
    )
    assert failure_line("Traceback\nValueError: bad\n") == "ValueError: bad"
    assert failure_line("") == ""
