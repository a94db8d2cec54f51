"""Where the agent crashed: the frames of its own files in the tracebacks its failed runs ended with
(evolve.meta.crashes)."""

from __future__ import annotations

from evolve.meta.crashes import FRAME_STEP, crashed, frames
from evolve.meta.evidence import TaskRun

CRASH = """agent: starting
Traceback (most recent call last):
  File "/usr/lib/python3.11/runpy.py", line 198, in _run_module_as_main
    return _run_code(code, main_globals, None,
  File "/work/agent/__main__.py", line 9, in <module>
    main()
  File "/work/agent/__main__.py", line 6, in main
    return solve(path)
           ^^^^^^^^^^^
  File "/work/agent/jobs/solve.py", line 3, in solve
    return re.findall("x", problem)
  File "/usr/lib/python3.11/re/__init__.py", line 216, in findall
    return _compile(pattern, flags).findall(string)
TypeError: expected string or bytes-like object, got 'PosixPath'
"""


def _agent(tmp_path):
    (tmp_path / "agent" / "jobs").mkdir(parents=True)
    for name in ("agent/__main__.py", "agent/jobs/solve.py", "agent/solve.py"):
        (tmp_path / name).write_text("x = 1\n")
    return tmp_path


def test_the_agents_frames_are_read_outermost_first_with_the_exception() -> None:
    found = frames(CRASH, ["agent/__main__.py", "agent/jobs/solve.py", "agent/solve.py"])
    assert found == (
        [("agent/__main__.py", 9), ("agent/__main__.py", 6), ("agent/jobs/solve.py", 3)],
        "TypeError: expected string or bytes-like object, got 'PosixPath'",
    )
    assert frames("agent: done after 3 steps\n", ["agent/__main__.py"]) is None
    library_only = 'Traceback (most recent call last):\n  File "/usr/lib/x.py", line 1, in f\nValueError\n'
    assert frames(library_only, ["agent/__main__.py"]) is None


def test_a_handled_traceback_before_the_last_is_not_read() -> None:
    earlier = CRASH.replace("/work/agent/jobs/solve.py", "/work/agent/solve.py")
    last = 'Traceback (most recent call last):\n  File "/w/agent/__main__.py", line 2, in f\nKeyError: 1'
    assert frames(
        earlier + "\nDuring handling of the above exception, another exception occurred:\n\n" + last,
        ["agent/__main__.py", "agent/solve.py"],
    ) == ([("agent/__main__.py", 2)], "KeyError: 1")


def test_the_frames_rank_by_the_share_of_failed_runs_that_crashed_the_raising_frame_first(tmp_path) -> None:
    code = _agent(tmp_path)
    runs = [
        TaskRun("a", "fail", (), agent_output=CRASH),
        TaskRun("b", "fail", (), agent_output=CRASH),
        TaskRun("c", "fail", (), agent_output="agent: out_of_steps after 20 steps"),
        TaskRun("d", "fail", (), agent_output="agent: done after 2 steps"),
        TaskRun("e", "pass", (), agent_output=CRASH),  # a pass is not counted
    ]
    ranked = crashed(code, runs)
    assert [(r.path, r.line) for r in ranked] == [
        ("agent/jobs/solve.py", 3),
        ("agent/__main__.py", 6),
        ("agent/__main__.py", 9),
    ]
    assert [r.score for r in ranked] == [0.5, 0.5 - FRAME_STEP, 0.5 - 2 * FRAME_STEP]
    assert "2 of 4 failed evaluations" in ranked[0].evidence and "TypeError" in ranked[0].evidence
    assert "a call from it raised" in ranked[1].evidence
    assert crashed(code, runs[2:]) == []
