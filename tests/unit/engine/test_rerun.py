"""Which of a parent's search tasks a candidate re-runs live (evolve.engine.rerun; the re-run itself is driven
through a real expansion in tests/unit/engine/test_repair.py)."""

from __future__ import annotations

from evolve.engine.rerun import rerun_tasks
from tests.unit.engine.test_behaviour import _evaluated, _task


def test_only_tasks_the_parent_always_failed_or_always_passed_are_rerun_in_recording_order(run, code) -> None:
    node = run.add_node(code({"a.py": "0\n"})).id
    names = ("fail-1", "pass-1", "flaky", "infra", "held", "fail-2", "pass-2", "fail-3", "gone")
    tasks = {name: _task(name) for name in names if name != "gone"}
    _evaluated(run, node, "fail-1", "fail")
    _evaluated(run, node, "pass-1", "pass")
    _evaluated(run, node, "flaky", "fail")
    _evaluated(run, node, "flaky", "pass")  # passed once: not a failure the parent always has
    _evaluated(run, node, "infra", "infra")  # the engine's failure: no outcome of the agent's
    _evaluated(run, node, "held", "fail", split="heldout")  # held-out tasks never feed the search
    _evaluated(run, node, "fail-2", "timeout")
    _evaluated(run, node, "pass-2", "pass")
    _evaluated(run, node, "fail-3", "fail")
    _evaluated(run, node, "gone", "fail")  # not one of the run's tasks any more
    picked = rerun_tasks(run, node, tasks, 2, 1)
    assert [t.id for t in picked.failed] == ["fail-1", "fail-2"] and [t.id for t in picked.passed] == [
        "pass-1"
    ]
    assert [t.id for t in rerun_tasks(run, node, tasks, 5, 5).passed] == ["pass-1", "pass-2"]
    assert not rerun_tasks(run, node, tasks, 0, 3) and rerun_tasks(run, node, tasks, 0, 3).passed == ()
