"""Canary tests: planted like real tests, failing wherever the test they copy passes, and the rule that
makes a verdict the tested code wrote itself `forged` (the grader on the host, no isolation)."""

from __future__ import annotations

import ast
import random
import subprocess
import sys

import pytest

from evolve.tasks import load_suite
from evolve.tasks.grader_canaries import plant, verdict
from evolve.tasks.grader_script import _names

from .test_grading import agent_diff, grade

SOURCE = b"""import pytest

from shop import total, names, flag


@pytest.mark.parametrize("n", [1, 2])
def test_total_of_items(n):
    assert total(n) == n * 10


def test_names_sorted():
    items = names()
    assert items == ["a", "b"]
    assert len(items) == 2


def test_flag_set():
    assert flag() is True


@pytest.mark.skip("later")
def test_skipped():
    assert False


class TestShop:
    def test_total_zero(self):
        assert total(0) == 0
"""
HONEST = (
    "def total(n):\n    return n * 10\n\n\ndef names():\n    return ['a', 'b']\n\n\ndef flag():\n    "
    "return True\n"
)
EQUAL_TO_ALL = (
    "class _Any:\n    def __eq__(self, other):\n        return True\n\n    def __len__(self):\n        "
    "return 2\n\n\n"
    "def total(n):\n    return _Any()\n\n\ndef names():\n    return _Any()\n\n\ndef flag():\n    return "
    "True\n"
)


def _run(tmp_path, source: bytes, module: str) -> list[dict]:
    """Run pytest on `source` beside `module` (shop.py); per-test outcomes as the results plugin reports
    them."""
    (tmp_path / "shop.py").write_text(module)
    (tmp_path / "test_shop.py").write_bytes(source)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rA", "test_shop.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    records = []
    for line in done.stdout.splitlines():
        word, _, test = line.partition(" ")
        if word in ("PASSED", "FAILED"):
            records.append({"test": test.split(" - ")[0], "when": "call", "outcome": word.lower()})
    return records


@pytest.mark.parametrize("seed", range(6))
def test_canaries_look_like_the_tests_beside_them_and_fail_where_they_pass(tmp_path, seed):
    planted_source, planted = plant(SOURCE, "test_shop.py", random.Random(seed), count=3)
    # only tests with an expected constant to change: never `total(n) == n * 10`, `== 0`
    assert len(planted) == 2
    tree = ast.parse(planted_source)
    for canary, real in planted.items():
        assert canary.rsplit("::", 1)[-1].startswith("test_") and "skipped" not in real
        assert canary.count("::") == real.count("::")  # the same scope: a method of TestShop stays one
    assert len([n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)]) == 5 + 2
    records = _run(tmp_path, planted_source, HONEST)
    assert verdict(records, planted, _names) == (None, [])
    for canary in planted:
        assert [r["outcome"] for r in records if _names(r["test"], canary)] and all(
            r["outcome"] == "failed" for r in records if _names(r["test"], canary)
        )


def test_a_canary_changes_a_literal_where_it_can_so_forged_equality_passes_it(tmp_path):
    planted_source, planted = plant(SOURCE, "test_shop.py", random.Random(1), count=4)
    records = _run(tmp_path, planted_source, EQUAL_TO_ALL)
    forged, _ = verdict(records, planted, _names)
    assert forged and "reported passed" in forged


def test_the_rule_forged_only_where_a_canary_and_its_test_both_pass_or_a_passing_run_lacks_it():
    planted = {"t.py::test_copy": "t.py::test_real"}
    passed = {"when": "call", "outcome": "passed"}
    failed = {"when": "call", "outcome": "failed"}
    assert verdict(
        [{"test": "t.py::test_real", **passed}, {"test": "t.py::test_copy", **failed}], planted, _names
    ) == (None, [])
    # a wrong answer may pass the copy while the real test fails: honest, no forgery
    assert verdict(
        [{"test": "t.py::test_real", **failed}, {"test": "t.py::test_copy", **passed}], planted, _names
    ) == (None, ["t.py::test_copy"])
    assert verdict(
        [{"test": "t.py::test_real", **passed}, {"test": "t.py::test_copy[1]", **passed}], planted, _names
    )[0]
    assert verdict([{"test": "t.py::test_real", **passed}], planted, _names) == (None, ["t.py::test_copy"])


def test_a_file_with_no_test_to_copy_gets_none_and_a_broken_file_is_left_alone():
    assert plant(b"def helper():\n    assert True\n", "t.py", random.Random(0)) == (
        b"def helper():\n    assert True\n",
        {},
    )
    assert plant(b"def test_x(:\n", "t.py", random.Random(0)) == (b"def test_x(:\n", {})
    early = b"def test_x():\n    if f():\n        return\n    assert g() == 1\n"
    assert plant(early, "t.py", random.Random(0))[1] == {}  # a return may skip the changed assertion


@pytest.fixture(scope="module")
def task():
    return load_suite("builtin").get("structs-lru-recency")


FORGERIES = {
    # every test's body replaced by nothing, from the package's own __init__.py
    "runtest disabled": "import _pytest.python\n_pytest.python.Function.runtest = lambda self: None\n",
    # every report turned to passed by a hook registered at import (no conftest needed)
    "reports rewritten": (
        "import _pytest.reports as _r\n_orig = _r.TestReport.from_item_and_call\n"
        "def _pass(item, call):\n    rep = _orig(item, call)\n    rep.outcome = 'passed'\n"
        "    return rep\n_r.TestReport.from_item_and_call = staticmethod(_pass)\n"
    ),
    # the real tests' records written straight to every pipe the process holds, then an early exit
    "records for the real names": (
        "import json as _j, os as _o\nfor _fd in map(int, _o.listdir('/proc/self/fd')):\n    try:\n"
        "        for _t in ('test_get_refreshes', 'test_missing_key_default'):\n"
        "            _o.write(_fd, (_j.dumps({'test': 'tests/test_structs_lru_recency.py::' + _t, 'when': "
        "'call',"
        " 'outcome': 'passed'}) + '\\n').encode())\n"
        "        _o.write(_fd, b'{\"end\": 0}\\n')\n    except OSError:\n        pass\n_o._exit(0)\n"
    ),
}


@pytest.mark.parametrize("name", list(FORGERIES))
def test_a_verdict_written_by_the_tested_code_is_forged(task, tmp_path, name):
    forgery = FORGERIES[name].replace("'", "'\"'\"'")
    patch = agent_diff(task, tmp_path, f"printf '%s' '{forgery}' >> structs/__init__.py")
    result = grade(task, patch, tmp_path)
    assert result.outcome == "forged", (result.detail, result.output[-2000:])


def test_twin_the_reference_with_the_same_imports_passes(task, tmp_path):
    fix = (
        "python3 - <<'EOF'\nfrom pathlib import Path\np = Path('structs/lru.py')\n"
        "s = p.read_text().replace('            return default\\n        return self._data[key]',"
        " '            return default\\n        self._data.move_to_end(key)\\n        return "
        "self._data[key]')\n"
        "p.write_text(s)\nEOF\nprintf 'import _pytest.python, _pytest.reports, json, os\\n' >> "
        "structs/__init__.py"
    )
    result = grade(task, agent_diff(task, tmp_path, fix), tmp_path)
    assert result.outcome == "pass", result.output
    assert "canary" not in result.output.lower()


def test_what_the_diagnosis_reads_names_no_canary():
    from evolve.tasks.grader_script import scrub

    out = (
        "___ test_real ___\nassert 1 == 2\n___ test_copy_x ___\nassert 5 == 13\n=== short test summary info "
        "===\n"
        "FAILED t.py::test_real\nFAILED t.py::test_copy_x\n"
    )
    assert scrub(out, {"t.py::test_copy_x": "t.py::test_real"}).splitlines() == [
        "___ test_real ___",
        "assert 1 == 2",
        "=== short test summary info ===",
        "FAILED t.py::test_real",
    ]


def test_a_canary_named_like_the_start_of_a_real_test_leaves_that_tests_lines():
    """A canary `test_clamp` beside the real `test_clamp_low` (CI: the real test's PASSED line went with
    it)."""
    from evolve.tasks.grader_script import scrub

    out = "PASSED t.py::test_clamp_low\nFAILED t.py::test_clamp\nFAILED t.py::test_clamp[1]\n"
    assert scrub(out, {"t.py::test_clamp": "t.py::test_clamp_low"}).splitlines() == [
        "PASSED t.py::test_clamp_low"
    ]


@pytest.mark.parametrize(
    ("command", "stops"),
    [
        ("python3 -m pytest -q tests", False),
        ("pytest -x tests", True),
        ("pytest --maxfail=1", True),
        ("pytest --exitfirst", True),
        ("pytest tests/x-y.py", False),
    ],
)
def test_no_canary_where_a_first_failure_stops_the_run(command, stops):
    from evolve.tasks.grader_canaries import stops_early

    assert stops_early(command) is stops
