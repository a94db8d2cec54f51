"""A failure a shell pipeline hid (evolve.meta.pipes): the commands that exited 0 while their output reported
a failure, from the probe's record, and the literals of a small agent written here (not the seed) that wrote
the pipe."""

from __future__ import annotations

import ast
import json

import numpy as np
import pytest

from evolve.meta.pipes import masked, pipe_locations
from evolve.meta.spectra import masking, read_tools, tool_notes
from evolve.meta.templates import edits_at

DOCTEST = (
    "Failed example:\n    area(2, 3)\nExpected:\n    6\nGot:\n    5\n"
    "1 items had failures:\n   1 of   1 in shapes.area\n***Test Failed*** 1 failures."
)
PYTEST = "..F\nFAILED tests/test_shapes.py::test_area - assert 5 == 6\n1 failed, 2 passed in 0.12s"

RUNNER = '''"""A runner."""
import subprocess

QUIET = " 2>&1 | tail -n 20"


def check(root, names):
    command = "python3 -m doctest " + " ".join(names) + QUIET
    done = subprocess.run(command, shell=True, cwd=root, capture_output=True, text=True)
    return done.returncode == 0


def listing(root):
    return subprocess.run("ls | sort", shell=True, cwd=root, capture_output=True, text=True).stdout
'''


@pytest.mark.parametrize(
    ("command", "exit", "output", "hid"),
    [
        ("python3 -m doctest shapes.py 2>&1 | tail -n 20", 0, DOCTEST, True),
        ("bash -c pytest -q | tail", 0, PYTEST, True),
        ("python3 x.py | head", 0, "Traceback (most recent call last):\n  ...\nValueError: no", True),
        ("python3 -m doctest shapes.py", 0, DOCTEST, False),  # no pipe: its status is its own
        ("pytest -q || true", 0, PYTEST, False),  # an or-list, not a pipe
        ("pytest -q | tail", 1, PYTEST, False),  # the failure was not hidden
        ("pytest -q | tail", 0, "3 passed in 0.1s, 0 failed", False),  # nothing failed
        ("pytest -q | tail", None, PYTEST, False),  # no status recorded
    ],
)
def test_a_pipeline_that_exited_0_while_its_output_reported_a_failure_is_masked(command, exit, output, hid):
    assert masked(command, exit, output) is hid


def test_the_probes_record_of_a_masked_command_is_read_and_noted() -> None:
    record = {"path": "agent/runner.py", "line": 9, "chars": 200, "returncode": 0, "text": DOCTEST}
    rows = [
        json.dumps({**record, "command": "/bin/sh -c python3 -m doctest shapes.py 2>&1 | tail -n 20"}),
        json.dumps({**record, "command": "/bin/sh -c python3 -m doctest shapes.py"}),
    ]
    outputs = read_tools("\n".join(rows).encode(), lambda line: True, DOCTEST, failed=True)
    assert [output.masked for output in outputs] == [True, False]
    assert outputs[0].command == "/bin/sh -c python3 -m doctest shapes.py 2>&1 | tail -n 20"
    assert outputs[0].error == "***Test Failed*** 1 failures."
    assert masking(outputs) == [(outputs[0].command, outputs[0].error)]
    assert (
        "1 of the 2 commands it ran in failing replays exited 0 while their output reported a failure"
        in (tool_notes(outputs)[("agent/runner.py", 9)])
    )
    # a passing run's pipelines are not evidence
    passing = read_tools(rows[0].encode(), lambda line: True, DOCTEST, failed=False)
    assert masking(passing) == []


def test_the_literal_that_wrote_the_pipe_is_ranked() -> None:
    trees = {"agent/runner.py": ast.parse(RUNNER)}
    commands = [
        ("/bin/sh -c python3 -m doctest shapes.py 2>&1 | tail -n 20", "***Test Failed*** 1 failures.")
    ]
    (found,) = pipe_locations(trees, commands)
    assert (found.path, found.line, found.score) == ("agent/runner.py", 4, 1.0)
    assert found.evidence.startswith("1 of the 1 pipelines that exited 0 in failing replays")
    assert "a pipeline's exit status is its last command's" in found.evidence
    # the other pipe (`ls | sort`) wrote none of it; without a masked command nothing is ranked
    assert pipe_locations(trees, []) == []


def test_the_pipe_template_cuts_a_literal_before_its_pipe_first_at_its_line() -> None:
    for seed in range(4):
        (first,) = edits_at(RUNNER, 4, 1, np.random.default_rng(seed))
        assert (first.template, first.line) == ("pipe", 4)
        assert "QUIET = ' 2>&1'\n" in first.source
    (cut,) = [e for e in edits_at(RUNNER, 15, 40, np.random.default_rng(0)) if e.template == "pipe"]
    assert "subprocess.run('ls', shell=True" in cut.source or 'subprocess.run("ls", shell=True' in cut.source
    # an or-list is no pipe
    assert not [
        e for e in edits_at("X = 'a || b'\n", 1, 40, np.random.default_rng(0)) if e.template == "pipe"
    ]
