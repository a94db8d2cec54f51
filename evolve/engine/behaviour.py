"""Does a candidate child act differently from its parent where the parent failed?

A code edit can leave the agent doing exactly what it did: a reshuffled function, a branch no task reaches,
a helper nobody calls. The wide CPU lineage's one valid child in eleven expansions rewrote its check
function into an equivalent, won the best belief on noise, and would have cost 109 held-out solves. Such a
child is caught without a model: re-run a few of the parent's failed evaluations with the child's code against
the parent's recorded model replies (a gateway that replays them, as `evolve replay --rerun` does). A
child that sends the model the very requests the parent sent, all of them, and fails the task again,
acted as its parent there. With `[meta] replays = n` a candidate that acts as its parent on each of
n of the parent's failed search tasks is refused at the stage `behaviour`, before the gate spends model
time on it; on any one task where it asks something new, asks less, leaves another change in the repository,
or passes, it goes on. One that breaks where the parent ran (its agent exits with an error or times out on a
replayed task) is refused at once: the smoke task reaches few of the agent's paths, a real task more.

The verdict comes from the engine's own channels: the replaying gateway's counts (requests answered
from the recording, requests it had no recording for), the engine's diff of the task's repository and the
grader's outcome. What the child prints,
exits with or writes decides nothing, and the check can only refuse: a child that varies its requests
on purpose passes it, and then faces the gate and its own evaluations like any other.
"""

from __future__ import annotations

import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from evolve.archive.store import Run
from evolve.engine.context import JobContext
from evolve.engine.evaluate import AgentProbe, EvalResult, EvalSettings, evaluate_task
from evolve.engine.replays import ReplayChannels, replayable
from evolve.llm.exchanges import exchanges_file
from evolve.llm.gateway import Gateway, JobReport
from evolve.tasks.types import Task
from evolve.untrusted import read_text

RECORDED = "recorded"
"""The job id every replayed request is answered under (one recording per replay)."""
BROKE = frozenset({"error", "timeout"})
"""Replayed outcomes that refuse a candidate at once: the parent's agent ran to its end there (it failed the
task), the candidate's exited with an error or hung, every request it sent answered from the recording. (One
that asks something new gets an error reply, which ends the seed's agent with an error: no breakage.) The
file-hidden run's two children crashed on every search task, on a case the smoke task never reaches."""
REPLAY_BYTES = 4 << 20
"""A parent's evaluation whose recorded exchanges and change are larger is not replayed (they ship with the
job)."""


@dataclass(frozen=True)
class Replay:
    """One of the parent's search evaluations, as a candidate re-runs it: the task, and the model's replies
    recorded then (the evaluation job's exchanges, JSONL), which answer in place of a model."""

    task: Task
    exchanges: str
    requests: int
    """How many requests the parent's agent sent (each got a reply)."""
    patch: str
    """The change the parent's agent left in the task's repository (the engine's diff, `diff.patch`)."""
    outcome: str = "fail"
    """The recorded evaluation's outcome."""


def failed_replays(run: Run, node_id: str, tasks: Mapping[str, Task], limit: int) -> tuple[Replay, ...]:
    """Up to `limit` of the node's failed search evaluations (distinct tasks, in recording order) whose
    model exchanges and change are recorded; never a held-out one."""
    return recorded_replays(run, node_id, tasks, limit, "fail")


def recorded_replays(
    run: Run, node_id: str, tasks: Mapping[str, Task], limit: int, outcome: str
) -> tuple[Replay, ...]:
    """Up to `limit` of the node's search evaluations with `outcome` (distinct tasks, in recording order)
    whose model exchanges and change are recorded; never a held-out one."""
    if limit <= 0:
        return ()
    picked: dict[str, Replay] = {}
    for evaluation, job in replayable(run, node_id):
        if len(picked) == limit:
            break
        if (
            evaluation.split != "dev"
            or evaluation.outcome != outcome
            or job is None
            or evaluation.task in picked
            or evaluation.task not in tasks
        ):
            continue
        path, patch = run.exchanges_file(job.id), run.log_dir(job.id) / "diff.patch"
        if (
            not path.is_file()
            or not patch.is_file()
            or path.stat().st_size + patch.stat().st_size > REPLAY_BYTES
        ):
            continue
        text = read_text(path, REPLAY_BYTES)  # bounded, and no byte of it can raise (evolve.untrusted)
        picked[evaluation.task] = Replay(
            tasks[evaluation.task],
            text,
            sum(1 for line in text.splitlines() if line.strip()),
            read_text(patch, REPLAY_BYTES),
            outcome,
        )
    return tuple(picked.values())


def replay_once(
    ctx: JobContext,
    code: Path,
    recorded: Replay,
    settings: EvalSettings,
    logs: Path,
    probe: AgentProbe | None = None,
) -> tuple[EvalResult, JobReport]:
    """Run `code`'s agent on `recorded`'s task with a gateway that answers from its recorded exchanges (no
    model), logs in `logs`, watched by `probe` if given: the evaluation's result, and what the replaying
    gateway saw of the job."""
    logs.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="evolve-replay-") as tmp:
        exchanges_file(Path(tmp), RECORDED).write_text(recorded.exchanges, encoding="utf-8")
        with Gateway(replay_from=Path(tmp)) as gateway:
            channels = ReplayChannels(gateway, RECORDED)
            result = evaluate_task(
                replace(ctx, job=f"{ctx.job}-{logs.name}", code=code, log_dir=logs, channels=channels),
                recorded.task,
                settings,
                probe or AgentProbe(),
            )
    return result, channels.closed[-1] if channels.closed else JobReport()


def acts_as_parent(
    ctx: JobContext, code: Path, replays: tuple[Replay, ...], settings: EvalSettings, log_dir: Path
) -> str | None:
    """Why the candidate (`code`) is refused: it acted as its parent on every replayed task; None when it
    acted differently on one (the rest are not run) or there was nothing to replay."""
    same = []
    for number, recorded in enumerate(replays, 1):
        logs = log_dir / f"replay-{number}"
        result, asked = replay_once(ctx, code, recorded, settings, logs)
        if result.outcome in BROKE and not asked.replay_misses:  # a new request is answered with an error
            return (
                f"it breaks where its parent ran: on {recorded.task.id}, one of the parent's failed tasks "
                f"replayed, its agent ended in {result.outcome} ({_last_line(result.detail)})"
            )
        changed = read_text(logs / "diff.patch") if (logs / "diff.patch").is_file() else None
        if (
            result.outcome != "fail"
            or asked.replay_misses
            or asked.requests != recorded.requests
            or changed != recorded.patch
        ):
            return None
        same.append(recorded.task.id)
    if not same:
        return None
    return (
        f"it acts as its parent: on {len(same)} of the parent's failed tasks ({', '.join(same)}) it sent "
        f"the model the parent's very requests, all of them, left the same change and failed again"
    )


def _last_line(detail: str, limit: int = 200) -> str:
    """The last non-empty line of an outcome's detail (a traceback's exception), cut to `limit` characters."""
    lines = [line.strip() for line in detail.splitlines() if line.strip()]
    return lines[-1][-limit:] if lines else ""
