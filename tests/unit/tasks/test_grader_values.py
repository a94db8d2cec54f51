"""Checks against a literal taken out of the tested process: the rewritten file holds no expected value of
them, the test sends what it computed, and root compares (the grader on the host, no isolation)."""

from __future__ import annotations

import ast

import pytest

from evolve.tasks import load_suite
from evolve.tasks.grader_calls import encode
from evolve.tasks.grader_script import _names
from evolve.tasks.grader_values import NAME, judge, take

from .test_grading import agent_diff, grade

SOURCE = b'''"""Hidden tests."""
from __future__ import annotations

import pytest

from shop import total, names, flag, code


def test_values():
    assert total(2) == 20
    assert names() == ["a", "b"]
    assert 7 != total(0)
    assert flag() is True
    assert code() is None
    assert len(names()) > 1


@pytest.mark.parametrize("n, want", [(1, 10), (3, 30)])
def test_table(n, want):
    assert total(n) == want


def test_early():
    if flag():
        return
    assert total(1) == 10


class TestShop:
    def test_unittest_forms(self):
        self.assertEqual(total(1), 10)
        self.assertIsNone(code())
        self.assertEqual(total(1), total(1))
'''


def test_checks_against_a_literal_leave_the_file_and_the_rest_stays():
    rewritten, taken = take(SOURCE, "t.py")
    text = rewritten.decode()
    assert "20" not in text and "['a', 'b']" not in text and "30" not in text  # the expected values left
    assert "assert len(names()) > 1" in text  # a truth test stays in the process
    assert "assert total(1) == 10" in text  # a test with an early exit is left as it was
    assert "self.assertEqual(total(1), total(1))" in text  # two values: nothing to take out
    assert ast.parse(rewritten).body[2].names[0].asname == NAME  # after the docstring and __future__
    assert taken == {
        "t.py::test_values": [
            {"op": "eq", "literal": 20},
            {"op": "eq", "literal": ["a", "b"]},
            {"op": "ne", "literal": 7},
            {"op": "is", "literal": True},
            {"op": "is", "literal": None},
        ],
        "t.py::test_table": [{"op": "eq", "rows": [10, 30]}],
        "t.py::TestShop::test_unittest_forms": [{"op": "eq", "literal": 10}, {"op": "is", "literal": None}],
    }
    assert "[(1, 0), (3, 1)]" in text  # the table's expected column keeps each case's row, not its value


def test_a_file_with_nothing_to_take_or_no_syntax_is_kept_as_it_is():
    for source in (b"def test_x():\n    assert f()\n", b"def test_x(:\n"):
        assert take(source, "t.py") == (source, {})


RAISES = b"""import pytest

from roman import parse


@pytest.mark.parametrize("text, n", [("I", 1), ("XIV", 14)])
def test_valid(text, n):
    assert parse(text) == n


@pytest.mark.parametrize("text", ["IIII", "VX"])
def test_invalid(text):
    with pytest.raises(ValueError, match="numeral"):
        parse(text)
"""


def test_a_check_for_a_value_and_one_for_an_exception_read_the_same():
    text = take(RAISES, "t.py")[0].decode()
    assert "def test_valid(text, case):\n    _evolve_value(lambda: parse(text), case)" in text
    assert "def test_invalid(text, case):\n    _evolve_value(lambda: parse(text), case)" in text
    assert "[('I', 0), ('XIV', 1)]" in text and "[('IIII', 0), ('VX', 1)]" in text and "numeral" not in text


def test_root_judges_an_exception_as_pytest_raises_would():
    taken = {"t.py::test_invalid": [{"op": "raises", "names": ["ValueError"], "match": "numeral"}]}

    def judged(sent):
        return judge(
            [_passed("t.py::test_invalid[IIII-0]"), {"value_of": "t.py::test_invalid[IIII-0]", **sent}],
            taken,
            _names,
        )[1].get("t.py::test_invalid[IIII-0]")

    assert judged({"raised": ["RomanError", "ValueError", "Exception"], "message": "bad numeral"}) is None
    assert judged({"value": encode(4)}) == "check 1: DID NOT RAISE ValueError"
    assert (
        judged({"raised": ["KeyError"], "message": "numeral"}) == "check 1: raised KeyError, not ValueError"
    )
    assert "does not match" in judged({"raised": ["ValueError"], "message": "no"})
    assert judge(
        [
            _passed("t.py::test_a"),
            {"value_of": "t.py::test_a", "raised": ["ZeroDivisionError"]},
            _sent("t.py::test_a", False),
        ],
        TAKEN,
        _names,
    )[1] == {"t.py::test_a": "check 1: raised ZeroDivisionError"}


def _sent(test, value, row=None):
    return {"value_of": test, "row": row, "value": encode(value)}


def _passed(test):
    return {"test": test, "when": "call", "outcome": "passed"}


TAKEN = {
    "t.py::test_a": [{"op": "eq", "literal": [1, 2]}, {"op": "is", "literal": False}],
    "t.py::test_t": [{"op": "eq", "rows": ["x", "y"]}],
}


def test_root_compares_the_values_a_passed_test_sent():
    right = [_passed("t.py::test_a"), _sent("t.py::test_a", [1, 2]), _sent("t.py::test_a", False)]
    assert judge(right, TAKEN, _names) == (None, {})
    wrong = [_passed("t.py::test_a"), _sent("t.py::test_a", (1, 2)), _sent("t.py::test_a", False)]
    assert judge(wrong, TAKEN, _names)[1] == {"t.py::test_a": "check 1: (1, 2) == [1, 2] is false"}
    falsy = [_passed("t.py::test_a"), _sent("t.py::test_a", [1, 2]), _sent("t.py::test_a", 0)]
    assert "check 2" in judge(falsy, TAKEN, _names)[1]["t.py::test_a"]  # `is False` is not `== 0`
    unplain = [
        _passed("t.py::test_a"),
        {"value_of": "t.py::test_a", "unplain": "a Money is not plain data"},
        _sent("t.py::test_a", False),
    ]
    assert "not plain data" in judge(unplain, TAKEN, _names)[1]["t.py::test_a"]


def test_a_passed_test_that_sent_other_than_one_value_per_check_is_forged():
    forged, _ = judge([_passed("t.py::test_a"), _sent("t.py::test_a", [1, 2])], TAKEN, _names)
    assert forged and "1 of its 2" in forged
    forged, _ = judge([_passed("t.py::test_a")], TAKEN, _names)
    assert forged and "0 of its 2" in forged
    # a failed test sent what it sent before failing: no verdict of its own, nothing to judge
    assert judge([{"test": "t.py::test_a", "when": "call", "outcome": "failed"}], TAKEN, _names) == (None, {})


def test_every_row_of_a_table_is_checked_under_its_own_row():
    both = [
        _passed("t.py::test_t[a-0]"),
        _sent("t.py::test_t[a-0]", "x", 0),
        _passed("t.py::test_t[b-1]"),
        _sent("t.py::test_t[b-1]", "y", 1),
    ]
    assert judge(both, TAKEN, _names) == (None, {})
    assert judge(both[:2], TAKEN, _names)[1] == {"t.py::test_t": "check 1: 1 of its 2 cases reported passed"}
    swapped = [_passed("t.py::test_t[a-0]"), _sent("t.py::test_t[a-0]", "x", 1)]
    assert "'x' == 'y' is false" in judge(swapped, TAKEN, _names)[1]["t.py::test_t[a-0]"]
    outside = [_passed("t.py::test_t[a-0]"), _sent("t.py::test_t[a-0]", "x", 7)]
    assert "no case of the table" in judge(outside, TAKEN, _names)[1]["t.py::test_t[a-0]"]


@pytest.fixture(scope="module")
def lru():
    return load_suite("builtin").get("structs-lru-recency")


SWALLOW = (
    "import _pytest.python as _p\n_orig = _p.Function.runtest\n"
    "def _run(self):\n    try:\n        _orig(self)\n    except BaseException:\n        pass\n"
    "_p.Function.runtest = _run\n"
)
"""Every test run, every failure swallowed: each test sends the values the unsolved code computes."""
GUESS = (
    "import _pytest.python as _p, evolve_results as _r\n"
    "def _run(self):\n    for _ in range(8):\n        _r.value(lambda: ['a', 'c'])\n"
    "_p.Function.runtest = _run\n"
)
"""Every test skipped, and values sent in its place (a guess at the answers)."""


@pytest.mark.parametrize("forgery", [SWALLOW, GUESS], ids=["failures swallowed", "values guessed"])
def test_a_forger_in_the_tested_process_gets_no_pass(lru, tmp_path, forgery):
    quoted = forgery.replace("'", "'\"'\"'")
    result = grade(lru, agent_diff(lru, tmp_path, f"printf '%s' '{quoted}' >> structs/__init__.py"), tmp_path)
    assert result.outcome in {"fail", "forged"}, (result.detail, result.output[-2000:])
    assert "value" in result.detail
    if forgery == SWALLOW:  # the truth test it swallowed stopped the test before its last value
        assert result.outcome == "forged" and "1 of its 2 checked values" in result.detail


def test_twin_the_fix_passes_and_what_the_diagnosis_reads_names_the_tests(lru, tmp_path):
    fix = (
        "python3 - <<'EOF'\nfrom pathlib import Path\np = Path('structs/lru.py')\n"
        "s = p.read_text().replace('            return default\\n        return self._data[key]',"
        " '            return default\\n        self._data.move_to_end(key)\\n        return "
        "self._data[key]')\n"
        "p.write_text(s)\nEOF\n"
    )
    result = grade(lru, agent_diff(lru, tmp_path, fix), tmp_path)
    assert result.outcome == "pass", (result.detail, result.output)
    wrong = grade(lru, agent_diff(lru, tmp_path / "w", "true"), tmp_path / "w")
    assert wrong.outcome == "fail" and "tests/test_structs_lru_recency.py::test_get_refreshes" in wrong.detail
    assert "test_get_refreshes" in wrong.output  # under its own name, though the grader renamed it
