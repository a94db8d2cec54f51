"""Evaluate one agent (a node) on one task: solve in a fresh sandbox, grade in a second one (DESIGN.md §4).

`evaluate_task` is the evaluation, one function over a job context (evolve.engine.context), run as is
by the local worker and shipped to cluster nodes. The agent sandbox gets the node's code at
/work/agent, the task repo at /work/repo (a git repo, so its tools can use git), the statement at
/work/problem.md and the gateway channel; it never sees the hidden tests. The engine copies the work
tree out and diffs it on the host; grading (evolve.tasks.grading) applies that diff to a clean repo in
a fresh sandbox and reverts protected paths. `evaluate` records each attempt as a job of its own;
an `infra` attempt is retried (evolve.engine.retry) and never counts against the agent.
"""

from __future__ import annotations

import json
import tarfile
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from evolve.archive.store import Run
from evolve.archive.vocab import JobKind, JobState, Outcome
from evolve.engine.context import Channel, Channels, ChannelSpec, JobContext, SandboxMaker, local_context
from evolve.engine.jobs import EvaluationResult
from evolve.engine.retry import InfraRetry
from evolve.sandbox.types import ExecResult, Sandbox, SandboxUnavailable
from evolve.tasks.grading import STAGE, GradeItem, grade_in
from evolve.tasks.tree_diff import TreeDiffFailed, diff_trees, tree_entries
from evolve.tasks.types import Task, write_files

AGENT_DIR, REPO_DIR, PROBLEM, TRANSCRIPT = "/work/agent", "/work/repo", "/work/problem.md", "/work/transcript.jsonl"
_GIT = ["git", "-c", "user.name=evolve", "-c", "user.email=evolve@localhost", "-c", "core.autocrlf=false"]


@dataclass(frozen=True)
class EvalSettings:
    budget_steps: int = 20
    """Step cap passed to the agent (`--budget-steps`)."""
    token_budget: int = 300_000
    """Tokens the gateway serves to one solve job."""
    infra_retries: int = 2
    """Extra attempts after an `infra` attempt (evolve.engine.retry), for evaluations and expansions."""
    tool_protocol: str = "text"
    """`text` (fenced blocks, small models) or `native` (OpenAI tool calls); `EVOLVE_TOOL_PROTOCOL`."""


@dataclass(frozen=True)
class EvalResult:
    task_id: str
    outcome: str
    detail: str
    duration_s: float
    tokens: int
    log_dir: Path | None


@dataclass(frozen=True)
class _Attempt:
    outcome: str
    detail: str
    tokens: int


def evaluate(run: Run, node_id: str, task: Task, *, sandboxes: SandboxMaker, gateway: Channels,
             settings: EvalSettings = EvalSettings()) -> EvalResult:
    """Run `node_id`'s agent on `task`, grade it, record the evaluation; retries `infra` attempts.

    Each attempt is a job of its own; an `infra` attempt that will be retried ends as a failed job."""
    jobs: list[int] = []

    def attempt(_: int) -> EvalResult:
        jobs.append(run.start_job(JobKind.EVALUATE, node_id, task=task.id).id)
        with local_context(run, jobs[-1], node_id, sandboxes=sandboxes, channels=gateway) as ctx:
            return evaluate_task(ctx, task, settings)

    result = InfraRetry(settings.infra_retries).run(
        attempt, lambda r: r.outcome == Outcome.INFRA,
        before_retry=lambda r: run.finish_job(jobs[-1], JobState.FAILED, r.detail))
    run.record_evaluation(node_id, task.id, result.outcome, duration_s=result.duration_s, tokens=result.tokens,
                          log_path=str(result.log_dir), split=task.split, job_id=jobs[-1])
    return result


@dataclass(frozen=True)
class Evaluation:
    """An evaluation as a worker runs it (here or shipped to a cluster node): the runner's result type."""

    task: Task
    settings: EvalSettings

    def channels(self, job: str) -> tuple[ChannelSpec, ...]:
        return (ChannelSpec(job, "solve", self.settings.token_budget),)

    def __call__(self, ctx: JobContext) -> EvaluationResult:
        result = evaluate_task(ctx, self.task, self.settings)
        return EvaluationResult(result.outcome, result.duration_s, result.tokens, log_path=str(result.log_dir),
                                detail=result.detail)


def evaluate_task(ctx: JobContext, task: Task, settings: EvalSettings = EvalSettings()) -> EvalResult:
    """The evaluation: one attempt to solve and grade `task`, its logs in `ctx.log_dir`; records nothing."""
    start = time.monotonic()
    try:
        result = _attempt(ctx, task, settings)
    except SandboxUnavailable as exc:
        result = _Attempt("infra", f"sandbox failed: {exc}", 0)
    except TreeDiffFailed as exc:  # the engine's own git failed on the host
        result = _Attempt("infra", f"the engine could not diff the agent's tree: {exc}", 0)
    duration = time.monotonic() - start
    (ctx.log_dir / "outcome.json").write_text(json.dumps({"outcome": result.outcome, "detail": result.detail,
                                                          "tokens": result.tokens, "duration_s": duration}))
    return EvalResult(task.id, result.outcome, result.detail, duration, result.tokens, ctx.log_dir)


def _attempt(ctx: JobContext, task: Task, settings: EvalSettings) -> _Attempt:
    """Solve, then grade; `infra` only from the engine's own failures or the gateway's upstream failures."""
    (spec,) = Evaluation(task, settings).channels(ctx.job)
    with tempfile.TemporaryDirectory(prefix="evolve-eval-") as tmp:
        repo = write_files(task.repo, Path(tmp) / "repo")
        channel = ctx.channels.open_job(spec.job, ctx.node_id, spec.role, spec.tokens)
        try:
            solved = _solve(ctx, task, repo, Path(tmp) / "after", channel, settings)
        finally:
            report = ctx.channels.close_job(spec.job)
    tokens = report.usage.prompt_tokens + report.usage.completion_tokens
    if solved.outcome == "infra":
        return _Attempt("infra", solved.detail, tokens)
    patch = (ctx.log_dir / "diff.patch").read_text()
    with ctx.sandboxes(task.image, f"{ctx.job}-grade", grader=True) as grader:
        # A container's grader stages in its root-owned /tmp; a process sandbox (tests) in its own directory.
        stage = STAGE if ctx.sandboxes.isolating else f"{grader.workdir}/grade"
        (grade,) = grade_in(grader, [GradeItem(task.id, task, patch)], isolate=ctx.sandboxes.isolating, remote=stage)
    (ctx.log_dir / "grade.log").write_text(f"{grade.outcome}: {grade.detail}\ndropped: {list(grade.dropped)}\n\n"
                                           f"{grade.output}")
    if grade.outcome == "pass":
        return _Attempt("pass", grade.detail, tokens)
    if report.upstream_failures > 0:  # the gateway's own record: the model failed this job, not the agent
        return _Attempt("infra", f"the gateway returned {report.upstream_failures} upstream failure(s) to this "
                                 f"job; {solved.detail}", tokens)
    if solved.outcome in {"timeout", "error"}:
        return _Attempt(solved.outcome, solved.detail, tokens)
    return _Attempt(grade.outcome, grade.detail, tokens)


def _solve(ctx: JobContext, task: Task, repo: Path, after: Path, channel: Channel, settings: EvalSettings) -> _Attempt:
    """Run the agent; leaves diff.patch, agent.log and transcript.jsonl in `log_dir`.

    The diff is the engine's: the work tree is copied out (the agent's `.git` is never read) and
    compared with the task's pristine files on the host (evolve.tasks.tree_diff)."""
    log_dir, timeout = ctx.log_dir, task_timeout(ctx, task)
    with ctx.sandboxes(task.image, ctx.job, gateway_socket=channel.socket_path) as box:
        box.put_dir(ctx.code, AGENT_DIR)
        box.put_dir(repo, REPO_DIR)
        box.write_file(PROBLEM, task.statement)
        git = " ".join(_GIT)
        ignore = "printf '__pycache__/\\n*.pyc\\n.pytest_cache/\\n' >> .git/info/exclude"
        setup = f"{git} init -q && {ignore} && {git} add -A && {git} commit -qm task"
        init = box.exec(["bash", "-c", setup], cwd=REPO_DIR, timeout=60)
        if not init.ok:
            return _Attempt("infra", f"cannot set up the task repo: {init.stderr[-500:]}", 0)
        env = {**channel.sandbox_env(), "EVOLVE_TRANSCRIPT": TRANSCRIPT, "EVOLVE_TOOL_PROTOCOL": settings.tool_protocol,
               "PYTHONDONTWRITEBYTECODE": "1"}
        try:
            ran = box.exec(["python3", "-m", "agent", "solve", "--workdir", REPO_DIR, "--problem", PROBLEM,
                            "--budget-steps", str(settings.budget_steps)], cwd=AGENT_DIR, env=env,
                           timeout=timeout)
        except SandboxUnavailable as exc:
            # Only the agent's processes run there: if the engine still copies the tree out below, the
            # agent stopped its own container (an engine failure raises again there and is infra).
            ran = ExecResult(-1, "", f"the agent's sandbox stopped while it ran: {exc}", 0.0)
        (log_dir / "agent.log").write_text(f"exit {ran.returncode}, {ran.duration:.1f} s, timed out {ran.timed_out}\n"
                                           f"--- stdout\n{ran.stdout}\n--- stderr\n{ran.stderr}")
        try:
            (log_dir / "transcript.jsonl").write_bytes(box.read_file(TRANSCRIPT))
        except (FileNotFoundError, IsADirectoryError):
            pass  # the agent wrote none; agent.log says what happened
        copied = _copy_out(box, after)
    patch = diff_trees(task.repo, tree_entries(after)) if copied is None else ""
    (log_dir / "diff.patch").write_text(patch)
    summary = (ran.stdout.strip().splitlines() or [""])[-1]
    if ran.timed_out:
        return _Attempt("timeout", f"the agent ran past {timeout:.0f} s", 0)
    if ran.disk_full:  # measured by the host after the agent failed, not taken from its output
        return _Attempt("error", f"the sandbox's disk was full when the agent exited with {ran.returncode}", 0)
    if ran.returncode != 0:
        return _Attempt("error", f"the agent exited with {ran.returncode}: {summary or ran.stderr[-300:]}", 0)
    if copied is not None:
        return _Attempt("error", copied, 0)
    return _Attempt("fail", summary, 0)


def _copy_out(box: Sandbox, dest: Path) -> str | None:
    """Copy the repo's work tree to `dest` (by the engine, not by a command in the box); why not, if it failed."""
    try:
        box.get_dir(REPO_DIR, dest)
    except (tarfile.TarError, FileNotFoundError) as exc:  # a link out of the repo, or no repo: the agent's doing
        return f"the agent's repo could not be copied out: {exc}"
    return None


def task_timeout(ctx: JobContext, task: Task) -> float:
    """The task's own agent timeout, within the one rule (it ends before its sandbox: evolve.engine.context)."""
    return min(task.agent_timeout_s, ctx.agent_timeout())


def evaluate_all(run: Run, node_id: str, tasks: list[Task], *, sandboxes: SandboxMaker, gateway: Channels,
                 settings: EvalSettings = EvalSettings(), on_result=None) -> list[EvalResult]:
    """Evaluate one node on several tasks, one after another; `on_result(result)` after each."""
    results = []
    for task in tasks:
        result = evaluate(run, node_id, task, sandboxes=sandboxes, gateway=gateway, settings=settings)
        results.append(result)
        if on_result is not None:
            on_result(result)
    return results
