"""Which of a parent's failures a candidate re-runs against the parent's recorded model replies
(evolve.engine.behaviour; the re-run itself is driven through a real expansion in
tests/integration/evolution/test_candidates.py)."""

from __future__ import annotations

from evolve.archive.vocab import JobKind
from evolve.engine.behaviour import REPLAY_BYTES, Replay, failed_replays, reaching_first, touched
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


def test_an_edit_touches_what_it_replaced_or_removed_the_lines_around_an_insertion_and_its_statements_start(
    tmp_path,
) -> None:
    parent, child = tmp_path / "parent", tmp_path / "child"
    before = {
        "pkg/a.py": 'PROMPT = (\n    "one "\n    "two"\n)\nx = 1\ny = 2\nz = 3\n',
        "pkg/gone.py": "a = 1\nb = 2\n",
        "pkg/same.py": "s = 1\n",
        "notes.txt": "not code\n",
    }
    after = {
        "pkg/a.py": 'PROMPT = (\n    "one "\n    "three"\n)\nx = 1\ny = 2\nw = 0\nz = 3\n',
        "pkg/same.py": "s = 1\n",
        "pkg/new.py": "n = 1\n",
        "notes.txt": "other\n",
    }
    for root, files in ((parent, before), (child, after)):
        for name, text in files.items():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_text(text)
    # the string's continuation line (3) and the statement it runs in (1); the lines either side of `w = 0`;
    # every line of the removed file; nothing of the new file, the unchanged one or the text file
    assert touched(parent, child) == {
        ("pkg/a.py", 1),
        ("pkg/a.py", 3),
        ("pkg/a.py", 6),
        ("pkg/a.py", 7),
        ("pkg/gone.py", 1),
        ("pkg/gone.py", 2),
    }
    assert touched(parent, parent) == frozenset()


def test_the_replays_that_ran_the_edit_come_first_then_the_untraced_and_a_traced_miss_never() -> None:
    def replay(name: str, ran: frozenset | None) -> Replay:
        return Replay(_task(name), "{}\n", 1, "", ran=ran)

    edited = frozenset({("agent/a.py", 5)})
    missed = replay("missed", frozenset({("agent/a.py", 4), ("agent/b.py", 5)}))
    untraced = replay("untraced", None)
    reached = replay("reached", frozenset({("agent/a.py", 5)}))
    assert [r.task.id for r in reaching_first((missed, untraced, reached), edited)] == ["reached", "untraced"]
    assert reaching_first((missed,), edited) == ()
