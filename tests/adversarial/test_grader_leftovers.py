"""What the tested code leaves for the root grader after the tests ran, in one shared grading sandbox:
a tree past the stack, a daemon whose name is not UTF-8, odd files, records of other shapes and sizes.
Each once crashed the grader after the tests ran (no verdict: an `infra` attempt, retried, never
counted); now each is a verdict, `fail` or `forged`. The honest twin leaves all of it beside the fix and
passes."""

from __future__ import annotations

import json

import pytest

from .test_grader import FORGE_RECORDS, _grade, _patch

LEFTOVERS = {
    # the job's tree 1,200 directories deep (shutil.rmtree recursed past the stack)
    "a tree deeper than the stack": (
        "import os as _o\n_d = _o.open('..', _o.O_RDONLY)\nfor _ in range(1200):\n"
        "    _o.mkdir('d', dir_fd=_d)\n    _n = _o.open('d', _o.O_RDONLY, dir_fd=_d)\n    _o.close(_d)\n    "
        "_d = _n\n"
    ),
    # a daemon in its own session whose name is not UTF-8 (the grader read /proc/*/status as text)
    "a daemon named in bytes that are not UTF-8": (
        "import os as _o\nif _o.fork() == 0:\n    _o.setsid()\n    _o.closerange(0, 1024)\n"
        "    import ctypes as _c, time as _t\n    _c.CDLL(None).prctl(15, b'\\xff\\xfe\\xfd', 0, 0, 0)\n"
        "    _t.sleep(600)\n    _o._exit(0)\n"
    ),
    # the next form: what a clean-up by path cannot take
    "locked directories, fifos, sockets, link loops and odd names": (
        "import os as _o, socket as _s\n_o.makedirs('../locked/in/deeper', exist_ok=True)\n"
        "open('../locked/in/deeper/f', 'w').close()\n_o.chmod('../locked/in/deeper', "
        "0)\n_o.chmod('../locked/in', 0)\n"
        "_o.chmod('../locked', 0)\n_o.mkfifo('../fifo')\n_s.socket(_s.AF_UNIX).bind('../sock')\n"
        "_o.symlink('loop', '../loop')\n_o.symlink('/', '../root')\nopen(b'../\\xff\\xfe name', "
        "'w').close()\n"
    ),
}


def _send(line: str, then_exit: bool = False) -> str:
    """Code that writes `line` into the results pipe its process holds (and maybe ends the run there)."""
    return (
        FORGE_RECORDS
        + f"_o.write(_fd, {line!r}.encode() + b'\\n')\n"
        + ("_o._exit(0)\n" if then_exit else "")
    )


RECORDS = {
    "a record nested past the stack": _send("[" * 100_000),
    "an end that is a list, then an early exit": _send(json.dumps({"end": []}), then_exit=True),
    "a failed test named with a megabyte": _send(
        json.dumps({"test": "x" * 1_000_000, "when": "call", "outcome": "failed"})
    ),
    "a failed test named with a lone surrogate": _send(
        '{"test": "\\ud800", "when": "call", "outcome": "failed"}'
    ),
    "a record with a field of another type": _send(
        json.dumps({"test": ["x"], "when": "call", "outcome": "passed"})
    ),
}


@pytest.mark.parametrize("name", [*LEFTOVERS, *RECORDS])
def test_what_the_tests_leave_gets_a_verdict_never_infra(grader_box, task, tmp_path, name):
    attack = LEFTOVERS.get(name) or RECORDS[name]
    init = task.repo["structs/__init__.py"].decode() + attack
    grade = _grade(grader_box, task, _patch(task, tmp_path, {"structs/__init__.py": init}))
    assert grade.outcome in {"fail", "forged"}, grade.detail
    assert len(grade.detail) < 5000 and grade.detail.encode("utf-8")  # what the host writes to grade.log


def test_twin_the_reference_passes_beside_everything_the_tests_can_leave(grader_box, task, tmp_path):
    init = task.repo["structs/__init__.py"].decode() + "".join(LEFTOVERS.values())
    grade = _grade(grader_box, task, _patch(task, tmp_path, {"structs/__init__.py": init}, fix=True))
    assert grade.outcome == "pass", grade.detail
    left = grader_box.exec(
        ["sh", "-c", "find /tmp -maxdepth 3 \\( -name locked -o -name fifo -o -name sock \\)"]
    )
    assert left.ok and left.stdout == "", left.stdout  # the job's tree is gone, locked and odd parts too
