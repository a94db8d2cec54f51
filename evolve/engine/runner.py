"""The asynchronous scheduler: ask the policy, dispatch jobs, record results, enforce budgets, resume.

There is no generation barrier: whenever a slot frees, the policy decides on a fresh snapshot of
the tree. Every state change is written to the archive as it happens (`started` before the work,
the result and the end of its job in one transaction after it), so a crash loses nothing and
resume is a query: jobs left `started` are marked interrupted and run again, finished ones never
(evolve.engine.resume). Each search decision draws from a generator seeded by (run seed, decisions
recorded so far), so at concurrency 1 a resumed run decides as one that never stopped.
"""

from __future__ import annotations

import errno
import logging
import shutil
import sqlite3
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, wait
from pathlib import Path

import numpy as np

from evolve.archive.compute import run_cpu_hours
from evolve.archive.records import Job
from evolve.archive.stops import record_stop
from evolve.archive.store import Run
from evolve.archive.vocab import JobKind, JobState, Outcome, Split, StopReason
from evolve.config import BudgetConfig
from evolve.engine.costs import Priors, budget_lines, eta_seconds, kept_priors
from evolve.engine.events import Evaluated, Expanded, Finished, RunEvents
from evolve.engine.executors import Executor
from evolve.engine.jobs import EvaluationResult, ExpansionResult, Worker
from evolve.engine.outcome import RunOutcome, Stopping
from evolve.engine.progress import ProgressSink, Snapshot
from evolve.engine.resume import Requeue, recover
from evolve.engine.state import SearchState
from evolve.errors import EvolveError
from evolve.meta import compiled
from evolve.meta.modify import commit_problem
from evolve.search import Evaluate, Expand, Policy, SearchView, Stop

log = logging.getLogger(__name__)

__all__ = ["MACHINE_FAULTS", "MAX_CONSECUTIVE_INFRA", "RunOutcome", "Runner", "task_order"]

# A worker's OSError with one of these stops the run (cleanly; a resume continues once fixed).
MACHINE_FAULTS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EIO})

# After this many infra outcomes in a row the engine, not the agents, is broken: stop the run.
MAX_CONSECUTIVE_INFRA = 8


def task_order(tasks: Sequence[str], seed: int) -> list[str]:
    """The run-wide fixed random order of the search tasks (paired comparisons across nodes)."""
    rng = np.random.default_rng([seed, 0x7A5C])
    ordered = sorted(tasks)
    return [ordered[i] for i in rng.permutation(len(ordered))]


class Runner:
    """Keeps up to `concurrency` jobs in flight until a budget or the policy stops the run."""

    def __init__(
        self,
        run: Run,
        policy: Policy,
        worker: Worker,
        executor: Executor,
        *,
        search_tasks: Sequence[str],
        heldout_tasks: Sequence[str] = (),
        heldout_seed: bool = False,
        budget: BudgetConfig,
        concurrency: int,
        seed: int,
        progress: ProgressSink | None = None,
        clock: Callable[[], float] = time.monotonic,
        fatal: Callable[[], str | None] = lambda: None,
        compiled_stage: int | None = None,
        cpus_per_job: float = 1.0,
        priors: Priors | None = None,
        events: RunEvents | None = None,
    ) -> None:
        self.run = run
        self.fatal = fatal  # a reason the run cannot go on (the gateway's refused engine key), polled
        self.policy = policy
        self.worker = worker
        self.executor = executor
        self.budget = budget
        self.concurrency = concurrency
        self.seed = seed
        self.progress = progress
        self.events = events  # an experiment tracker: each recorded result, then the end
        self.clock = clock
        self.heldout_tasks = list(heldout_tasks)
        self.heldout_seed = heldout_seed  # the seed is scored on them too, after the final agent
        self.cpus_per_job = cpus_per_job  # a job's sandbox CPUs: what its wall time costs in CPU-hours
        self.compiled_stage = compiled_stage  # DGM's compiled check on this many first tasks; None: off
        self.state = SearchState.from_run(run, task_order(search_tasks, seed))
        self.priors = kept_priors(run, priors)  # the plan's prices, as the run's first start recorded them
        self._reserve_jobs = _heldout_due(run, self.heldout_tasks, heldout_seed)
        self._stop = threading.Event()
        self._cancel = threading.Event()
        self._in_flight: dict[Future, Job] = {}
        self._infra_streak = 0
        self._invalid_streak = _trailing_invalid(run)
        self._expansions = sum(j.kind == JobKind.EXPAND and j.state == JobState.FINISHED for j in run.jobs())
        self._decisions = run.decisions_recorded()
        self._requeue = Requeue()
        self._started_at = clock()
        self._stop_recorded: Stopping | None = None
        # held-out evaluations the run owes, once the final agent is known
        self._heldout_owed: int | None = None

    # -- control (safe from a signal handler) ----------------------------------------------

    def request_stop(self) -> None:
        """Start no new work; let the jobs in flight finish (first Ctrl-C)."""
        self._stop.set()

    @property
    def cancelled(self) -> bool:
        return self._cancel.is_set()

    def cancel(self) -> None:
        """Stop now: kill the work in flight and mark its jobs cancelled (second Ctrl-C)."""
        self._stop.set()
        self._cancel.set()
        self.worker.cancel()

    # -- the loop --------------------------------------------------------------------------

    def execute(self) -> RunOutcome:
        """Run until a budget, the policy or the user stops it; then score the final agent.

        A fault of the engine itself (a full disk, a read-only or damaged archive) stops the run
        cleanly: the work in flight is cancelled (its sandboxes removed), its jobs are marked where the
        archive still takes writes, and the error goes on to the caller; a resume continues."""
        try:
            return self._execute()
        except BaseException as error:
            self._abort(error)
            raise

    def _abort(self, error: BaseException) -> None:
        self.cancel()
        for job in self._in_flight.values():
            try:
                self.run.finish_job(job.id, JobState.CANCELLED, f"interrupted: {type(error).__name__}")
            except (sqlite3.Error, OSError, EvolveError) as exc:
                # The archive takes no writes now: the job stays `started`, which a resume re-queues too.
                log.warning("job %s left started (%s); a resume re-runs it", job.id, exc)
        self._in_flight.clear()

    def _execute(self) -> RunOutcome:
        self._requeue = recover(
            self.run,
            search_tasks=self.state.task_order,
            heldout_tasks=self.heldout_tasks,
            evaluated=self.state.evaluated,
        )
        requeue = self._requeue.search
        if stage := self.compiled_stage:  # a crash may have come before the check
            for node in map(str, list(self.state.tree)):
                if len(self.state.evaluated(node)) >= stage:
                    self._enforce_compiled(node, stage)
        stopping: Stopping | None = None
        record_stop(self.run, None)  # this session runs: an earlier session's reason no longer holds
        while True:
            # Interrupted jobs were admitted under the budgets before the crash: they run again
            # even when a budget is now spent, unless the user stops the run.
            while requeue and not self._stop.is_set() and len(self._in_flight) < self.concurrency:
                interrupted = requeue.pop(0)
                self._dispatch(interrupted.kind, interrupted.node, interrupted.task, interrupted)
            stopping = stopping or self._budget_spent()
            while stopping is None and len(self._in_flight) < self.concurrency:
                left = self._expansions_left()
                view = self.priced_view(left)
                action = self.policy.next_action(view, self._rng())
                if isinstance(action, Stop):
                    if not self._in_flight:
                        stopping = _policy_stop(view, action, left, self.budget.expansions)
                    break
                if view.spend is not None:
                    kind = JobKind.EVALUATE if isinstance(action, Evaluate) else JobKind.EXPAND
                    self.run.record_decision(self._decisions, kind, view.spend)
                self._dispatch_action(action)
            if stopping is not None and stopping != self._stop_recorded:
                # when it happens: a process killed later keeps it
                record_stop(self.run, stopping.reason, stopping.text)
                self._stop_recorded = stopping
            if not self._in_flight:
                break
            self._collect(timeout=0.5)
            self._report()
            if self._cancel.is_set():
                # Work that cannot be killed (a model call on the host) is abandoned, not awaited.
                for job in self._in_flight.values():
                    self.run.finish_job(job.id, JobState.CANCELLED, "cancelled by the user")
                self._in_flight.clear()
                stopping = Stopping.of(StopReason.CANCELLED)
        stopping = stopping or Stopping.of(StopReason.STOPPED)
        if stopping != self._stop_recorded:
            record_stop(self.run, stopping.reason, stopping.text)
            self._stop_recorded = stopping
        return self._finish(stopping)

    def priced_view(self, expansions_left: int | None) -> SearchView:
        """What the policy decides on: the tree, the jobs in flight and the budget that binds, priced
        from the archive's rows with the plan's prices as priors (evolve.engine.costs)."""
        lines = budget_lines(
            self.run, self.budget, self.state.used, self.cpus_per_job, self.priors, self._reserve_jobs
        )
        return self.state.priced_view(lines, expansions_left)

    def _rng(self) -> np.random.Generator:
        # One generator per decision, seeded by (run seed, decisions recorded): a resumed run draws
        # the same numbers a run that never stopped would have drawn at that point (re-runs of
        # interrupted jobs are not decisions).
        return np.random.default_rng([self.seed, self._decisions])

    def _budget_spent(self) -> Stopping | None:
        budget = self.budget
        if (fatal := self.fatal()) is not None:
            self._stop.set()  # no model can be reached: nothing more starts, the held-out score included
            return Stopping(StopReason.MODEL_REFUSED, fatal)
        if self._stop.is_set():
            return Stopping.of(StopReason.STOP_REQUESTED)
        if self.state.used >= budget.evaluations:
            return Stopping.of(StopReason.EVALUATION_BUDGET, f"({self.state.used}/{budget.evaluations})")
        tokens, dollars = self.run.usage_totals()
        if budget.tokens is not None and tokens >= budget.tokens:
            return Stopping.of(StopReason.TOKEN_BUDGET, f"({tokens}/{budget.tokens})")
        if budget.dollars is not None and dollars >= budget.dollars:
            return Stopping.of(StopReason.DOLLAR_BUDGET, f"(${dollars:.2f}/${budget.dollars:.2f})")
        if budget.cpu_hours is not None and (hours := self._cpu_hours()) >= budget.cpu_hours:
            return Stopping.of(StopReason.CPU_HOUR_BUDGET, f"({hours:.2f}/{budget.cpu_hours:g} CPU-hours)")
        if budget.wall_clock_s is not None and self.clock() - self._started_at >= budget.wall_clock_s:
            return Stopping.of(StopReason.WALL_CLOCK_BUDGET, f"({budget.wall_clock_s:.0f} s)")
        if self._infra_streak >= MAX_CONSECUTIVE_INFRA:
            return Stopping(
                StopReason.INFRA_STREAK,
                f"{self._infra_streak} {StopReason.INFRA_STREAK} (Docker or the model server)",
            )
        if budget.invalid_streak is not None and self._invalid_streak >= budget.invalid_streak:
            return Stopping(
                StopReason.INVALID_STREAK,
                (
                    f"{self._invalid_streak} {StopReason.INVALID_STREAK} with nothing left to evaluate "
                    "(the diagnosis or the modify model keeps failing: see the `reason` of the last nodes "
                    "in `evolve tree`, fix the models, then resume)"
                ),
            )
        if budget.stop_when_solved and (solved := self._solved()) is not None:
            return Stopping.of(
                StopReason.SOLVED,
                f"(node {solved}, {len(self.state.task_order)} of "
                f"{len(self.state.task_order)}; `[budget] stop_when_solved`)",
            )
        return None

    def _solved(self) -> str | None:
        """The first valid node that passed every search task, if one has."""
        view = self.state.view(self.budget.evaluations)
        solved = np.flatnonzero(view.valid & (view.successes >= len(self.state.task_order)))
        return str(view.ids[int(solved[0])]) if solved.size and self.state.task_order else None

    def _cpu_hours(self) -> float:
        return run_cpu_hours(self.run, self.cpus_per_job, now=time.time())

    def _expansions_started(self) -> int:
        return self._expansions + len(self.state.pending_expansions)

    def _expansions_left(self) -> int | None:
        """The expansion budget left. When it is spent the search goes on evaluating the nodes it has
        until the evaluation budget (the policy's B) is spent: new children still get their results."""
        if self.budget.expansions is None:
            return None
        return max(self.budget.expansions - self._expansions_started(), 0)

    def _dispatch_action(self, action: Evaluate | Expand) -> None:
        if isinstance(action, Evaluate):
            self._dispatch(JobKind.EVALUATE, str(action.node), str(action.task), None)
        for parent in action.parents if isinstance(action, Expand) else ():  # a GEA group: one unit,
            self._dispatch(JobKind.EXPAND, str(parent), None, None)  # its jobs share the decision ordinal
        self._decisions += 1

    def _dispatch(self, kind: JobKind, node_id: str, task: str | None, requeues: Job | None) -> None:
        if requeues is not None:
            job = self.run.start_job(kind, node_id, task, requeues=requeues)
        else:
            split = Split.DEV if kind == JobKind.EVALUATE else None
            job = self.run.start_job(kind, node_id, task, split=split, decision=self._decisions)
        node = self.run.node(node_id)
        future: Future
        if kind == JobKind.EVALUATE:
            self.state.pending_evaluations[job.id] = (node_id, _task(job))
            future = self.executor.submit(self.worker.evaluate, job, node, _task(job), Split.DEV)
        else:
            self.state.pending_expansions[job.id] = node_id
            future = self.executor.submit(self.worker.expand, job, node)
        self._in_flight[future] = job

    def _collect(self, timeout: float) -> None:
        done, _ = wait(list(self._in_flight), timeout=timeout, return_when=FIRST_COMPLETED)
        for future in done:
            job = self._in_flight[future]
            self.state.pending_evaluations.pop(job.id, None)
            self.state.pending_expansions.pop(job.id, None)
            self._settle(job, future)
            del self._in_flight[future]  # only once recorded: a fault while recording leaves it to `_abort`

    def _settle(self, job: Job, future: Future) -> None:
        if self._cancel.is_set():
            self.run.finish_job(job.id, JobState.CANCELLED, "cancelled by the user")
            return
        error = future.exception()
        if isinstance(error, OSError) and error.errno in MACHINE_FAULTS:
            raise error  # the disk, not the job: every next job would fail the same way
        if error is not None:
            # A worker bug or an unexpected failure: the job failed, the run goes on.
            self.run.finish_job(job.id, JobState.FAILED, f"{type(error).__name__}: {error}")
            self._infra_streak += 1
            return
        result = future.result()
        if isinstance(result, EvaluationResult):
            self._record_evaluation(job, result)
        else:
            self._record_expansion(job, result)

    def _enforce_compiled(self, node_id: str, stage: int) -> bool:
        """Mark a valid child that is not compiled (DGM's check, evolve.meta.compiled) invalid, in the archive
        and then the live state; True when it did. The one place the check is applied (after a result, and
        on resume)."""
        if self.state.tree.parent(node_id) is None or not self.state.tree.is_valid(node_id):
            return False
        verdict = compiled.compiled_verdict(self.run, node_id, stage, self.state.task_order)
        if verdict is None or verdict.valid:
            return False
        self.run.invalidate(node_id, verdict.reason or "not compiled")
        self.state.invalidate(node_id)
        log.info("node %s is invalid: %s", node_id, verdict.reason)
        return True

    def _record_evaluation(self, job: Job, result: EvaluationResult) -> None:
        self.run.record_evaluation(
            job.node,
            _task(job),
            result.outcome,
            duration_s=result.duration_s,
            tokens=result.tokens,
            log_path=result.log_path,
            split=Split.DEV,
            job_id=job.id,
        )
        self._tell_evaluated(job, result, Split.DEV)
        counted = self.state.add_result(job.node, _task(job), result.outcome)
        if counted and self.compiled_stage == len(self.state.evaluated(job.node)):
            self._enforce_compiled(job.node, self.compiled_stage)
        self._infra_streak = self._infra_streak + 1 if result.outcome == Outcome.INFRA else 0
        self._invalid_streak = 0  # there was something to evaluate

    def _record_expansion(self, job: Job, result: ExpansionResult) -> None:
        valid = result.valid and result.code_dir is not None
        reason = None if valid else (result.reason or "no child code")
        # the archive commits the tree the gate checked, or no valid node
        if valid and result.code_dir is not None:
            reason = commit_problem(
                result.code_dir, result.tree, self.run.code.tree_hash(self.run.node(job.node).commit)
            )
            valid = reason is None
        with tempfile.TemporaryDirectory(prefix="evolve-parent-") as tmp:
            # A child without code carries its parent's, taken from git, never copied into logs/.
            code_dir = result.code_dir or self.run.checkout(job.node, Path(tmp) / "code")
            node = self.run.add_node(
                code_dir,
                parent=job.node,
                origin="self_modify",
                status="valid" if valid else "invalid",
                reason=reason,
                instructions=result.instructions,
                job_id=job.id,
            )
        logs = (self.run.path / "logs").resolve()
        if not valid and result.code_dir is not None and result.code_dir.resolve().is_relative_to(logs):
            # An invalid child's code is in git now; its patch stays in the job's log as the evidence.
            shutil.rmtree(result.code_dir, ignore_errors=True)
        self.state.add_node(node)
        if self.events is not None:
            self.events.record(Expanded(job, job.node, node.id, node.valid, result.tokens, result.cost_usd))
        self._expansions += 1
        self._infra_streak = 0
        self._invalid_streak = 0 if valid else self._invalid_streak + 1

    # -- the end ---------------------------------------------------------------------------

    def _finish(self, stopping: Stopping) -> RunOutcome:
        view = self.state.view(self.budget.evaluations)
        best = self.policy.best(view)
        passed, total = 0, len(self.heldout_tasks)
        # A user's stop skips the held-out scoring too; `evolve run --resume` does it.
        scored = best is not None and bool(self.heldout_tasks) and not self._stop.is_set()
        seed: str | None = None
        if scored:
            root = self.run.nodes()[0].id  # the seed: created first
            self._heldout_owed = total * (2 if self.heldout_seed and root != str(best) else 1)
            passed, total = self._score_heldout(str(best))
            if self.heldout_seed and root != str(best) and not self._stop.is_set():
                self._score_heldout(root)  # recorded beside the final agent's, on the same tasks
                seed = root
            scored = not self._stop.is_set()
        self._report(final=True)
        outcome = RunOutcome(
            stopping.text,
            None if best is None else str(best),
            passed,
            total,
            self.state.used,
            len(self.state.tree),
            scored,
            stop=stopping.reason,
            seed_node=seed if scored else None,
        )
        if self.events is not None:
            self.events.record(Finished(outcome))
        return outcome

    def _tell_evaluated(self, job: Job, result: EvaluationResult, split: Split) -> None:
        if self.events is not None:
            evaluated = Evaluated(
                job, job.node, _task(job), split, Outcome(result.outcome), result.tokens, result.cost_usd
            )
            self.events.record(evaluated)

    def _score_heldout(self, node_id: str) -> tuple[int, int]:
        """Evaluate the final agent on every held-out task it has no counted result for yet.

        Its jobs say `split = heldout`, so a resume re-runs an interrupted one here, never in the
        search; results go to the held-out split, which no search count or budget reads. At most
        `concurrency` jobs are handed to the executor at a time, so a stop (the first Ctrl-C) starts
        no new one and the rest are scored on resume."""
        done: dict[str, str] = {
            e.task: e.outcome
            for e in self.run.evaluations(node_id, split=Split.HELDOUT)
            if e.outcome != Outcome.INFRA
        }
        interrupted = {j.task: j for j in self._requeue.heldout if j.node == node_id}
        node = self.run.node(node_id)
        waiting = [task for task in self.heldout_tasks if task not in done]
        pending: dict[Future, tuple[Job, str]] = {}
        while waiting or pending:
            while waiting and len(pending) < self.concurrency and not self._stop.is_set():
                task = waiting.pop(0)
                job = self.run.start_job(
                    JobKind.EVALUATE, node_id, task, split=Split.HELDOUT, requeues=interrupted.get(task)
                )
                pending[self.executor.submit(self.worker.evaluate, job, node, task, Split.HELDOUT)] = (
                    job,
                    task,
                )
            if not pending:
                break  # stopped while scoring: the rest is scored on resume
            self._report(heldout=[job for job, _ in pending.values()])
            finished, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in finished:
                job, task = pending.pop(future)
                self._record_heldout(future, job, node_id, task, done)
        return sum(outcome == Outcome.PASS for outcome in done.values()), len(self.heldout_tasks)

    def _record_heldout(
        self, future: Future, job: Job, node_id: str, task: str, done: dict[str, str]
    ) -> None:
        error = future.exception()
        if self._cancel.is_set():
            self.run.finish_job(job.id, JobState.CANCELLED, "cancelled by the user")
            return
        if error is not None:
            self.run.finish_job(job.id, JobState.FAILED, f"{type(error).__name__}: {error}")
            return
        result = future.result()
        self.run.record_evaluation(
            node_id,
            task,
            result.outcome,
            duration_s=result.duration_s,
            tokens=result.tokens,
            log_path=result.log_path,
            split=Split.HELDOUT,
            job_id=job.id,
        )
        self._tell_evaluated(job, result, Split.HELDOUT)
        if result.outcome != Outcome.INFRA:
            done[task] = result.outcome

    def _report(self, final: bool = False, heldout: Sequence[Job] | None = None) -> None:
        """Show the run's state; `heldout`: the held-out jobs in flight, once the search is over."""
        if self.progress is None:
            return
        view = self.state.view(self.budget.evaluations)
        # at most, until known
        owed = self._heldout_owed or len(self.heldout_tasks) * (2 if self.heldout_seed else 1)
        due = max(owed - _heldout_scored(self.run), 0)
        searching = heldout is None and not final
        eta = eta_seconds(
            self.priced_view(None).spend if searching else None, self.run.job_totals(), due, self.concurrency
        )
        tokens, dollars = self.run.usage_totals()
        best = self.policy.best(view)
        best_counts = self.state.tree.own_counts(str(best)) if best is not None else None
        self.progress.update(
            Snapshot(
                in_flight=[
                    (job.kind, job.node, job.task) for job in [*self._in_flight.values(), *(heldout or ())]
                ],
                evaluations_used=self.state.used,
                evaluations_budget=self.budget.evaluations,
                nodes_valid=int(view.valid.sum()),
                nodes_invalid=int((~view.valid).sum()),
                best_node=None if best is None else str(best),
                best_successes=best_counts.successes if best_counts else 0,
                best_failures=best_counts.failures if best_counts else 0,
                tokens=tokens,
                cost_usd=dollars,
                cpu_hours=self._cpu_hours(),
                elapsed_s=self.clock() - self._started_at,
                eta_s=0.0 if final else eta,
                heldout_scored=owed - due,
                heldout_total=owed,
                final=final,
            )
        )


def _task(job: Job) -> str:
    """An evaluation job's task (every evaluation job has one)."""
    if job.task is None:
        raise EvolveError(f"evaluation job {job.id} has no task")
    return job.task


_UNIT_STOPS = {
    "evaluations": StopReason.EVALUATION_BUDGET,
    "cpu_hours": StopReason.CPU_HOUR_BUDGET,
    "tokens": StopReason.TOKEN_BUDGET,
    "dollars": StopReason.DOLLAR_BUDGET,
}


def _policy_stop(
    view: SearchView, action: Stop, expansions_left: int | None, expansions: int | None
) -> Stopping:
    """Why the run ends when the policy stops with nothing in flight: the budget that binds when it
    cannot pay another evaluation, the expansion budget when that is spent, else the policy's reason."""
    spend = view.spend
    if spend is not None and spend.unit != "evaluations" and view.budget_left == 0:
        figures = (
            f"({spend.spent:.4g} spent + {spend.reserve:.4g} held-out reserve of {spend.limit:g} "
            f"{spend.unit}; "
            f"an evaluation costs {spend.evaluation_price:.4g})"
        )
        return Stopping.of(_UNIT_STOPS[spend.unit], figures)
    if expansions_left == 0:
        return Stopping.of(StopReason.EXPANSION_BUDGET, f"({expansions}); {action.reason}")
    return Stopping(StopReason.POLICY, action.reason)


def _heldout_due(run: Run, heldout_tasks: Sequence[str], heldout_seed: bool) -> int:
    """Held-out evaluations the run still owes after the search: the final agent's, and the seed's under
    `heldout_seed` (an upper bound: the seed is not scored twice when it is the final agent)."""
    return max(len(heldout_tasks) * (2 if heldout_seed else 1) - _heldout_scored(run), 0)


def _heldout_scored(run: Run) -> int:
    return sum(e.outcome != Outcome.INFRA for e in run.evaluations(split=Split.HELDOUT))


def _trailing_invalid(run: Run) -> int:
    """Invalid children made since the last search evaluation (the streak a resume continues)."""
    evaluations = run.evaluations(split=Split.DEV)
    since = evaluations[-1].created if evaluations else 0.0
    streak = 0
    for node in reversed(run.nodes()):
        if node.valid or node.created <= since:
            break
        streak += 1
    return streak
