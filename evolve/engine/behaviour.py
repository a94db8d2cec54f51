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

Which failures: where the spectra traced the parent's runs (evolve.engine.spectra), those whose run went
through a line the candidate's edit touched, first; a traced run that went through none of them is not
replayed, since the candidate's code, on the same replies, runs the parent's path there to the end: it can
only act as its parent. An untraced failure may go either way and is replayed after the touched ones. When
every failure is traced and none went through the edit, nothing is replayed: a candidate the screen kept
(it made the parent's failing own tests pass: it acts differently there) goes on, any other is refused at
once (it changes nothing any recorded failure ran).

The verdict comes from the engine's own channels: the replaying gateway's counts (requests answered
from the recording, requests it had no recording for), the engine's diff of the task's repository and the
grader's outcome. What the child prints,
exits with or writes decides nothing, and the check can only refuse: a child that varies its requests
on purpose passes it, and then faces the gate and its own evaluations like any other. The traces are written
in the parent's sandbox, and the screen's verdict is its own tests' exit status, so both are the agent's to
write: they only choose what is replayed, or spare a candidate this check, never give it credit.
"""

from __future__ import annotations

import ast
import difflib
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from evolve import syntax
from evolve.archive.store import Run
from evolve.engine.context import JobContext
from evolve.engine.evaluate import AgentProbe, EvalResult, EvalSettings, evaluate_task
from evolve.engine.replays import ReplayChannels, replayable
from evolve.llm.exchanges import exchanges_file
from evolve.llm.gateway import Gateway, JobReport
from evolve.meta.locations import Line
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
    ran: frozenset[Line] | None = None
    """The agent's lines the node's own code ran on this replay under the spectra's trace (None: untraced)."""


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
    ctx: JobContext,
    code: Path,
    replays: tuple[Replay, ...],
    settings: EvalSettings,
    log_dir: Path,
    *,
    limit: int | None = None,
    shown_fixed: bool = False,
) -> str | None:
    """Why the candidate (`code`, a child of `ctx.code`) is refused: it acted as its parent on each of up to
    `limit` (None: all) of `replays` that may reach its edit, the touched ones first; None when it acted
    differently on one (the rest are not run) or there was nothing to replay. Where every replay was traced
    and none ran a line the edit touched, it is refused without a run, unless it has `shown_fixed` (the
    screen kept it)."""
    if not replays:
        return None
    chosen = reaching_first(replays, touched(ctx.code, code))
    if not chosen:
        if shown_fixed:
            return None
        traced = ", ".join(r.task.id for r in replays)
        return (
            f"its edit touches no line its parent ran on the failed tasks traced ({traced}): there it can "
            f"only act as its parent"
        )
    same = []
    for number, recorded in enumerate(chosen[:limit], 1):
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


def reaching_first(replays: tuple[Replay, ...], edited: frozenset[Line]) -> tuple[Replay, ...]:
    """Those of `replays` that may reach an edit touching the lines `edited`: the traced ones whose run ran
    one of them, then the untraced ones, each in their order."""
    reaching = tuple(r for r in replays if r.ran is not None and r.ran & edited)
    return reaching + tuple(r for r in replays if r.ran is None)


def touched(parent: Path, child: Path) -> frozenset[Line]:
    """The parent's lines (path relative to `parent`, number) an edit from `parent` to `child` touches, in
    the parent's Python files (none over `REPLAY_BYTES`, no link followed): each line it replaced or removed
    (all of a removed file's), the lines on either side of an insertion, and the first line of the innermost
    statement around each (a trace records a statement by its first line: a string's continuation line runs
    as it does). A new file adds none: only an edited line (an import) reaches it."""
    lines: set[Line] = set()
    for path in sorted(parent.rglob("*.py")):
        if path.is_symlink() or not path.is_file() or "__pycache__" in path.parts:
            continue
        name = path.relative_to(parent).as_posix()
        before = read_text(path, REPLAY_BYTES).splitlines()
        after_path = child / name
        if after_path.is_symlink() or not after_path.is_file():
            numbers = set(range(1, len(before) + 1))
        else:
            after = read_text(after_path, REPLAY_BYTES).splitlines()
            numbers = _edited(before, after) if after != before else set()
        if numbers:
            lines |= {(name, n) for n in _with_statements(numbers, "\n".join(before))}
    return frozenset(lines)


def _edited(before: list[str], after: list[str]) -> set[int]:
    """The 1-based lines of `before` that turning it into `after` replaces or removes, and those either side
    of an insertion."""
    numbers: set[int] = set()
    matcher = difflib.SequenceMatcher(None, before, after, autojunk=False)
    for tag, start, end, _, _ in matcher.get_opcodes():
        if tag in ("replace", "delete"):
            numbers |= set(range(start + 1, end + 1))
        elif tag == "insert":
            numbers |= {n for n in (start, start + 1) if 1 <= n <= len(before)}
    return numbers


def _with_statements(numbers: set[int], source: str) -> set[int]:
    """`numbers` and the first line of the innermost statement of `source` around each."""
    tree = syntax.parsed(source)
    if tree is None:
        return numbers
    spans = [
        (node.lineno, node.end_lineno or node.lineno) for node in ast.walk(tree) if isinstance(node, ast.stmt)
    ]
    firsts = set()
    for number in numbers:
        around = [(last - first, first) for first, last in spans if first <= number <= last]
        if around:
            firsts.add(min(around)[1])
    return numbers | firsts


def _last_line(detail: str, limit: int = 200) -> str:
    """The last non-empty line of an outcome's detail (a traceback's exception), cut to `limit` characters."""
    lines = [line.strip() for line in detail.splitlines() if line.strip()]
    return lines[-1][-limit:] if lines else ""
