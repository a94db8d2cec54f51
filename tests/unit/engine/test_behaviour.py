"""Which of a parent's failures a candidate re-runs against the parent's recorded model replies
(evolve.engine.behaviour; the re-run itself is driven through a real expansion in
tests/integration/evolution/test_candidates.py)."""

from __future__ import annotations

from evolve.archive.vocab import JobKind
from evolve.engine.behaviour import REPLAY_BYTES, failed_replays
from evolve.tasks.types import Task


def _task(name: str, split: str = "dev") -> Task:
    return Task(name, "toy", split, f"solve {name}", {"a.py": b""}, {}, "", "true")  # type: ignore[arg-type]


def _evaluated(
    run,
    node: str,
    task: str,
    outcome: str,
    *,
    split: str = "dev",
    exchanges: str | None = "{}\n{}\n",
    patch: str | None = "--- a/a.py\n",
):
    job = run.start_job(JobKind.EVALUATE, node, task=task)
    if exchanges is not None:
        run.exchanges_file(job.id).parent.mkdir(parents=True, exist_ok=True)
        run.exchanges_file(job.id).write_text(exchanges)
    if patch is not None:
        (run.log_dir(job.id) / "diff.patch").write_text(patch + task)
    run.record_evaluation(node, task, outcome, split=split, job_id=job.id)


def test_only_failed_search_evaluations_with_a_recording_are_replayed_once_each(run, code) -> None:
    node = run.add_node(code({"a.py": "0\n"})).id
    tasks = {
        name: _task(name)
        for name in ("pass", "fail-1", "held", "gone", "no-diff", "slow", "huge", "fail-2", "fail-3")
    }
    _evaluated(run, node, "pass", "pass")
    _evaluated(run, node, "fail-1", "fail", exchanges='{"a": 1}\n\n{"b": 2}\n{"c": 3}\n')
    _evaluated(run, node, "fail-1", "fail")  # the same task again: replayed once
    _evaluated(run, node, "held", "fail", split="heldout")  # held-out tasks never feed the search
    _evaluated(run, node, "gone", "fail", exchanges=None)  # nothing recorded: nothing to answer with
    _evaluated(run, node, "no-diff", "fail", patch=None)  # its change unknown: nothing to compare with
    _evaluated(run, node, "slow", "timeout")  # only a plain failure is re-run (a timeout would take its time)
    _evaluated(run, node, "huge", "fail", exchanges="x" * (REPLAY_BYTES + 1))
    _evaluated(run, node, "fail-2", "fail")
    _evaluated(run, node, "fail-3", "fail")
    picked = failed_replays(run, node, tasks, 2)
    assert [(r.task.id, r.requests) for r in picked] == [("fail-1", 3), ("fail-2", 2)]
    assert picked[0].exchanges.startswith('{"a": 1}') and picked[0].patch == "--- a/a.py\nfail-1"
    assert failed_replays(run, node, tasks, 0) == ()
    assert [r.task.id for r in failed_replays(run, node, {"fail-2": tasks["fail-2"]}, 5)] == ["fail-2"]
