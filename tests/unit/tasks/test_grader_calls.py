"""Function-level checks out of process: plain data across, so nothing the candidate does in its own process
passes the check (the grader on the host, no isolation)."""

from __future__ import annotations

import math

import pytest

from evolve.tasks.grader_calls import decode, encode
from evolve.tasks.humaneval import TEST_FILE, stub_file
from evolve.tasks.types import Task

from .test_grading import grade

PROMPT = 'def double_all(values: list) -> list:\n    """Each value doubled."""\n'
CHECK = (
    "def check(candidate):\n    assert candidate([1, 2]) == [2, 4]\n    assert candidate([]) == []\n"
    "    assert double_all([5]) == [10]\n"
)


def _task() -> Task:
    return Task(
        id="calls-demo",
        suite="demo",
        split="dev",
        statement="",
        repo={"solution.py": stub_file(PROMPT).encode()},
        hidden_tests={
            "tests/test_solution.py": TEST_FILE.format(
                task_id="demo", entry="double_all", test=CHECK
            ).encode()
        },
        reference_patch="",
        test_command="",
        results="calls",
        test_timeout_s=20.0,
    )


def _patch(body: str) -> str:
    old, new = stub_file(PROMPT).splitlines(), (PROMPT + body).splitlines()
    lines = [f" {line}" for line in old[:-1]] + [f"-{old[-1]}"] + [f"+{line}" for line in new[len(old) - 1 :]]
    return (
        "\n".join(
            [
                "diff --git a/solution.py b/solution.py",
                "--- a/solution.py",
                "+++ b/solution.py",
                f"@@ -1,{len(old)} +1,{len(new)} @@",
                *lines,
            ]
        )
        + "\n"
    )


HONEST = "    return [2 * v for v in values]\n"
CHEATS = {
    # the expected record to a results pipe, then an early exit
    "record and os._exit": (
        "    import os\n    for fd in range(3, 64):\n        try:\n"
        '            os.write(fd, b\'{"test": "check", "when": "call", "outcome": "passed"}\\n{"end": '
        "0}\\n')\n"
        "        except OSError:\n            pass\n    os._exit(0)\n"
    ),
    "an object equal to everything": (
        "    class Any(list):\n        def __eq__(self, other):\n            return True\n    return Any()\n"
    ),
    "AssertionError disabled": (
        "    import builtins\n    builtins.AssertionError = type('N', (BaseException,), {})\n    return [0]\n"
    ),
    "sys.exit(0) at the call": "    raise SystemExit(0)\n",
    "json patched to answer right": (
        '    import json\n    json.dumps = lambda *a, **k: \'["ok", {"list": [2, 4]}]\'\n    return None\n'
    ),
}


def test_the_honest_answer_passes_and_the_stub_fails(tmp_path):
    assert grade(_task(), _patch(HONEST), tmp_path / "a").outcome == "pass"
    stub = grade(_task(), "", tmp_path / "b")
    assert stub.outcome == "fail" and "NotImplementedError" in stub.output
    assert ": assert candidate([1, 2]) == [2, 4]" in stub.output  # the diagnosis reads which check failed


@pytest.mark.parametrize("name", list(CHEATS))
def test_nothing_the_candidate_does_in_its_process_passes(tmp_path, name):
    result = grade(_task(), _patch(CHEATS[name]), tmp_path)
    assert result.outcome == "fail", (result.detail, result.output)


@pytest.mark.parametrize(
    "value",
    [
        None,
        True,
        3,
        -(2**70),
        1.5,
        math.inf,
        "é\n",
        b"\x00",
        (1, [2]),
        {3: {4}},
        frozenset({1}),
        2j,
        {"a": (None,)},
    ],
)
def test_plain_data_crosses_unchanged(value):
    assert decode(encode(value)) == value and type(decode(encode(value))) is type(value)


def test_anything_else_is_refused():
    with pytest.raises(ValueError):
        encode(object())
    with pytest.raises(ValueError):
        encode([x for x in range(3)].__iter__())
