"""Does a candidate child fix what its parent failed, without breaking what it passed? A live re-run.

The replayed behaviour (evolve.engine.behaviour) only shows that a candidate acts differently; whether the
difference helps needs the model. With `[meta] rerun = n` a candidate that passed the cheaper stages solves
n of the parent's failed search tasks again, live, through the real evaluation pipeline
(evolve.engine.evaluate, its own model channel per task, so its tokens are the run's), and `[meta]
rerun_passed` of the tasks the parent passed. It must pass more of the failed ones than the parent did (none:
they are the parent's failures) and every passed one; the survivor that fixes most becomes the child
(generate and validate: GenProg, ChatRepair, each candidate checked against the failing and the passing runs).
A candidate that has already shown a fix (an edit the screen kept: it passes the own tests its parent failed,
evolve.engine.screen) is not refused for passing none of the failed tasks, one noisy sample each; it must
still keep every passed one.

The verdict comes from the engine's grader, never from what the candidate prints. A live solve is one sample
of a stochastic model: a fix here is evidence, not proof, and the gate and the candidate's own evaluations
follow. The tasks are chosen on the host from the archive: the parent's search tasks it only ever failed
(or only ever passed), distinct, in recording order, never a held-out one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from evolve.archive.store import Run
from evolve.engine.context import JobContext
from evolve.engine.evaluate import EvalSettings, evaluate_task
from evolve.tasks.types import Task


@dataclass(frozen=True)
class Rerun:
    """The parent's search tasks a candidate solves again, live."""

    failed: tuple[Task, ...] = ()
    passed: tuple[Task, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.failed)


@dataclass(frozen=True)
class RerunVerdict:
    fixed: int
    """The parent's failed tasks the candidate passed."""
    reason: str | None
    """Why it is refused (None: it fixed at least one and kept every pass)."""
    tokens: int


def rerun_tasks(run: Run, node_id: str, tasks: Mapping[str, Task], failed: int, passed: int) -> Rerun:
    """Up to `failed` search tasks the node only ever failed and `passed` it only ever passed (an infra
    attempt counts neither way), distinct, in recording order."""
    if failed <= 0:
        return Rerun()
    outcomes: dict[str, set[bool]] = {}
    for evaluation in run.evaluations(node_id, split="dev"):
        if evaluation.outcome != "infra" and evaluation.task in tasks:
            outcomes.setdefault(evaluation.task, set()).add(evaluation.outcome == "pass")
    only_failed = [tasks[t] for t, seen in outcomes.items() if seen == {False}]
    only_passed = [tasks[t] for t, seen in outcomes.items() if seen == {True}]
    return Rerun(tuple(only_failed[:failed]), tuple(only_passed[: max(passed, 0)]))


def rerun_candidate(
    ctx: JobContext,
    code: Path,
    rerun: Rerun,
    settings: EvalSettings,
    log_dir: Path,
    *,
    shown_fixed: bool = False,
) -> RerunVerdict:
    """Solve the parent's failed tasks, then its passed ones, live with the candidate's `code`; each task's
    logs under `log_dir / rerun-k`. The passed ones are not run when none of the failed ones was fixed, unless
    the candidate has shown a fix already (`shown_fixed`: then fixing none is no refusal)."""
    fixed: list[str] = []
    tokens = 0
    for number, task in enumerate(rerun.failed, 1):
        result = _solve(ctx, code, task, settings, log_dir / f"rerun-{number}", number)
        tokens += result.tokens
        if result.outcome == "pass":
            fixed.append(task.id)
    if not fixed and not shown_fixed:
        names = ", ".join(t.id for t in rerun.failed)
        return RerunVerdict(
            0,
            f"re-run live, it passed none of the parent's {len(rerun.failed)} failed tasks ({names})",
            tokens,
        )
    for offset, task in enumerate(rerun.passed, len(rerun.failed) + 1):
        result = _solve(ctx, code, task, settings, log_dir / f"rerun-{offset}", offset)
        tokens += result.tokens
        if result.outcome not in ("pass", "infra"):  # infra is the engine's failure, not the candidate's
            return RerunVerdict(
                len(fixed),
                f"re-run live, it fixed {', '.join(fixed) or 'none'} but ended {result.outcome} on "
                f"{task.id}, which its parent passed",
                tokens,
            )
    return RerunVerdict(len(fixed), None, tokens)


def _solve(ctx: JobContext, code: Path, task: Task, settings: EvalSettings, logs: Path, number: int):
    logs.mkdir(parents=True, exist_ok=True)
    # its own gateway job (the parent node's, so its tokens count in the run's budget) and its own sandboxes
    job = (
        f"{ctx.job}-{logs.parent.name}-rerun-{number}"
        if logs.parent != ctx.log_dir
        else f"{ctx.job}-rerun-{number}"
    )
    return evaluate_task(replace(ctx, job=job, code=code, log_dir=logs), task, settings)
