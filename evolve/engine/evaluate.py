"""Evaluate one agent (a node) on one task: solve in a fresh sandbox, grade in a second one
(docs/design.md §Security).

`evaluate_task` is the evaluation, one function over a job context (evolve.engine.context), run as is
by the local worker and shipped to cluster nodes. The agent sandbox, of the task's solve image, gets
the node's code at /work/agent, the task repo at /work/repo (a git repo, so its tools can use git) or,
where the image holds the repo (a SWE-bench instance's /testbed), that repo handed to the agent's uid,
the statement at /work/problem.md and the gateway channel; it never sees the hidden tests. The engine
copies the work tree out and diffs it on the host; grading, in a fresh sandbox of the task's grade
image, applies that diff to a clean repo and reverts protected paths (evolve.tasks.grading), or gets it
with them already taken out (SWE-bench's harness: evolve.tasks.swebench_grading). `evaluate` records
each attempt as a job of its own;
an `infra` attempt is retried (evolve.engine.retry) and never counts against the agent.
"""

from __future__ import annotations

import json
import posixpath
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
from evolve.tasks.grading import STAGE, Grade, GradeItem, grade_in
from evolve.tasks.swebench import SWEbenchUnavailable
from evolve.tasks.tree_diff import Entry, TreeDiffFailed, diff_entries, keep_unprotected, tree_entries
from evolve.tasks.types import Task, write_files

AGENT_DIR, REPO_DIR, PROBLEM, TRANSCRIPT = (
    "/work/agent",
    "/work/repo",
    "/work/problem.md",
    "/work/transcript.jsonl",
)
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
class AgentProbe:
    """How the engine watches one agent run (evolve.engine.spectra's coverage): `launcher` runs the agent's
    module in place of `python3 -m`, and each of `collect`'s sandbox files, read after the agent ran, is
    written to the log directory under its name there. What it collects was written in the agent's
    sandbox: the agent's to change, so it may rank places in its code and never decide anything."""

    launcher: tuple[str, ...] = ("python3", "-m")
    collect: tuple[tuple[str, str], ...] = ()
    """(sandbox path, file name in the log directory) pairs."""


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
    dropped: tuple[str, ...] = ()
    """Paths whose changes the engine took out of the diff (tasks whose grader applies it as it comes)."""


def evaluate(
    run: Run,
    node_id: str,
    task: Task,
    *,
    sandboxes: SandboxMaker,
    gateway: Channels,
    settings: EvalSettings = EvalSettings(),
) -> EvalResult:
    """Run `node_id`'s agent on `task`, grade it, record the evaluation; retries `infra` attempts.

    Each attempt is a job of its own; an `infra` attempt that will be retried ends as a failed job."""
    jobs: list[int] = []

    def attempt(_: int) -> EvalResult:
        jobs.append(run.start_job(JobKind.EVALUATE, node_id, task=task.id).id)
        with local_context(run, jobs[-1], node_id, sandboxes=sandboxes, channels=gateway) as ctx:
            return evaluate_task(ctx, task, settings)

    result = InfraRetry(settings.infra_retries).run(
        attempt,
        lambda r: r.outcome == Outcome.INFRA,
        before_retry=lambda r: run.finish_job(jobs[-1], JobState.FAILED, r.detail),
    )
    run.record_evaluation(
        node_id,
        task.id,
        result.outcome,
        duration_s=result.duration_s,
        tokens=result.tokens,
        log_path=str(result.log_dir),
        split=task.split,
        job_id=jobs[-1],
    )
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
        return EvaluationResult(
            result.outcome,
            result.duration_s,
            result.tokens,
            log_path=str(result.log_dir),
            detail=result.detail,
        )


def evaluate_task(
    ctx: JobContext, task: Task, settings: EvalSettings = EvalSettings(), probe: AgentProbe = AgentProbe()
) -> EvalResult:
    """The evaluation: one attempt to solve and grade `task`, its logs in `ctx.log_dir`; records nothing."""
    start = time.monotonic()
    try:
        result = _attempt(ctx, task, settings, probe)
    except SandboxUnavailable as exc:
        result = _Attempt("infra", f"sandbox failed: {exc}", 0)
    except SWEbenchUnavailable as exc:  # its instance image is not here and cannot be pulled
        result = _Attempt("infra", str(exc), 0)
    except TreeDiffFailed as exc:  # the engine's own git failed on the host
        result = _Attempt("infra", f"the engine could not diff the agent's tree: {exc}", 0)
    duration = time.monotonic() - start
    (ctx.log_dir / "outcome.json").write_text(
        json.dumps(
            {
                "outcome": result.outcome,
                "detail": result.detail,
                "tokens": result.tokens,
                "duration_s": duration,
            }
        )
    )
    return EvalResult(task.id, result.outcome, result.detail, duration, result.tokens, ctx.log_dir)


def _attempt(ctx: JobContext, task: Task, settings: EvalSettings, probe: AgentProbe) -> _Attempt:
    """Solve, then grade; `infra` only from the engine's own failures or the gateway's upstream failures."""
    (spec,) = Evaluation(task, settings).channels(ctx.job)
    with tempfile.TemporaryDirectory(prefix="evolve-eval-") as tmp:
        channel = ctx.channels.open_job(spec.job, ctx.node_id, spec.role, spec.tokens)
        try:
            solved = _solve(ctx, task, Path(tmp), channel, settings, probe)
        finally:
            report = ctx.channels.close_job(spec.job)
    tokens = report.usage.prompt_tokens + report.usage.completion_tokens
    if solved.outcome == "infra":
        return _Attempt("infra", solved.detail, tokens)
    patch = (ctx.log_dir / "diff.patch").read_text()
    with ctx.sandboxes(
        task.grade_image, f"{ctx.job}-grade", grader=True, writable_root=task.writable_root
    ) as grader:
        grade = _grade(ctx, grader, task, patch, solved.dropped)
    (ctx.log_dir / "grade.log").write_text(
        f"{grade.outcome}: {grade.detail}\ndropped: {list(grade.dropped)}\n\n{grade.output}"
    )
    if grade.outcome in {"pass", "forged"}:  # a forgery is the agent's whatever else failed
        return _Attempt(grade.outcome, grade.detail, tokens)
    if report.upstream_failures > 0:  # the gateway's own record: the model failed this job, not the agent
        return _Attempt(
            "infra",
            f"the gateway returned {report.upstream_failures} upstream failure(s) to this "
            f"job; {solved.detail}",
            tokens,
        )
    if solved.outcome in {"timeout", "error"}:
        return _Attempt(solved.outcome, solved.detail, tokens)
    return _Attempt(grade.outcome, grade.detail, tokens)


def _grade(ctx: JobContext, grader: Sandbox, task: Task, patch: str, dropped: tuple[str, ...]) -> Grade:
    """The task's grader on the engine's diff, in the fresh grading sandbox."""
    if task.grader == "swebench":
        from evolve.tasks.swebench_grading import grade_swebench

        return grade_swebench(grader, task, patch, dropped=dropped)
    # A container's grader stages in its root-owned /tmp; a process sandbox (tests) in its own directory.
    stage = STAGE if ctx.sandboxes.isolating else f"{grader.workdir}/grade"
    (grade,) = grade_in(
        grader, [GradeItem(task.id, task, patch)], isolate=ctx.sandboxes.isolating, remote=stage
    )
    return grade


def _solve(
    ctx: JobContext, task: Task, tmp: Path, channel: Channel, settings: EvalSettings, probe: AgentProbe
) -> _Attempt:
    """Run the agent; leaves diff.patch, agent.log and transcript.jsonl in `log_dir`.

    The diff is the engine's: the work tree is copied out (the agent's `.git` is never read) and
    compared with the task's pristine files on the host (evolve.tasks.tree_diff)."""
    log_dir, timeout = ctx.log_dir, task_timeout(ctx, task)
    repo_dir = task.repo_in_image or REPO_DIR
    if task.grader == "swebench":  # its image comes from Docker Hub: pulled once, on first use
        from evolve.tasks.swebench_grading import ensure_image

        ensure_image(task.solve_image)
    with ctx.sandboxes(
        task.solve_image, ctx.job, gateway_socket=channel.socket_path, writable_root=task.writable_root
    ) as box:
        box.put_dir(ctx.code, AGENT_DIR)
        box.write_file(PROBLEM, task.statement)
        pristine = _lay_out_repo(box, task, tmp / "repo")
        if isinstance(pristine, str):
            return _Attempt("infra", pristine, 0)
        env = {
            **channel.sandbox_env(),
            "EVOLVE_TRANSCRIPT": TRANSCRIPT,
            "EVOLVE_TOOL_PROTOCOL": settings.tool_protocol,
            "PYTHONDONTWRITEBYTECODE": "1",
        }
        try:
            ran = box.exec(
                [
                    *probe.launcher,
                    "agent",
                    "solve",
                    "--workdir",
                    repo_dir,
                    "--problem",
                    PROBLEM,
                    "--budget-steps",
                    str(settings.budget_steps),
                ],
                cwd=AGENT_DIR,
                env=env,
                timeout=timeout,
            )
        except SandboxUnavailable as exc:
            # Only the agent's processes run there: if the engine still copies the tree out below, the
            # agent stopped its own container (an engine failure raises again there and is infra).
            ran = ExecResult(-1, "", f"the agent's sandbox stopped while it ran: {exc}", 0.0)
        (log_dir / "agent.log").write_text(
            f"exit {ran.returncode}, {ran.duration:.1f} s, timed out {ran.timed_out}\n"
            f"--- stdout\n{ran.stdout}\n--- stderr\n{ran.stderr}"
        )
        try:
            (log_dir / "transcript.jsonl").write_bytes(box.read_file(TRANSCRIPT))
        except (FileNotFoundError, IsADirectoryError):
            pass  # the agent wrote none; agent.log says what happened
        for where, name in probe.collect:
            try:
                (log_dir / name).write_bytes(box.read_file(where))
            except (FileNotFoundError, IsADirectoryError):
                pass  # not written (the agent ended first or removed it): the reader finds no file
        copied = _copy_out(box, repo_dir, tmp / "after")
    patch, dropped = ("", ()) if copied is not None else _change(task, pristine, tree_entries(tmp / "after"))
    (log_dir / "diff.patch").write_text(patch)
    summary = (ran.stdout.strip().splitlines() or [""])[-1]
    if ran.timed_out:
        return _Attempt("timeout", f"the agent ran past {timeout:.0f} s", 0, dropped)
    if ran.disk_full:  # measured by the host after the agent failed, not taken from its output
        return _Attempt(
            "error", f"the sandbox's disk was full when the agent exited with {ran.returncode}", 0, dropped
        )
    if ran.returncode != 0:
        return _Attempt(
            "error", f"the agent exited with {ran.returncode}: {summary or ran.stderr[-300:]}", 0, dropped
        )
    if copied is not None:
        return _Attempt("error", copied, 0)
    return _Attempt("fail", summary, 0, dropped)


def _lay_out_repo(box: Sandbox, task: Task, host: Path) -> dict[bytes, Entry] | str:
    """The task's repo in the sandbox, a git repo the agent's tools can use; its pristine tree (what the
    diff is taken against), or why it could not be laid out (an engine failure).

    A repo the image holds (SWE-bench's /testbed, root's there) is copied out before any agent code runs
    and back in, which hands it to the agent's uid; its pristine tree is that copy."""
    if task.repo_in_image is None:
        box.put_dir(write_files(task.repo, host), REPO_DIR)
        git = " ".join(_GIT)
        ignore = "printf '__pycache__/\\n*.pyc\\n.pytest_cache/\\n' >> .git/info/exclude"
        setup = f"{git} init -q && {ignore} && {git} add -A && {git} commit -qm task"
        init = box.exec(["bash", "-c", setup], cwd=REPO_DIR, timeout=60)
        if not init.ok:
            return f"cannot set up the task repo: {init.stderr[-500:]}"
        return {rel.encode(): ("100644", content) for rel, content in task.repo.items()}
    parent, name = posixpath.split(task.repo_in_image)
    try:
        box.get_dir(task.repo_in_image, host / name)
    except (tarfile.TarError, FileNotFoundError) as exc:  # before any agent code ran: the image or the engine
        return (
            f"cannot copy the image's repo {task.repo_in_image} out of {task.solve_image} (over the "
            "sandbox's "
            f"copy_limit_bytes?): {exc}"
        )
    box.put_dir(host, parent)  # with the repo's own directory, so the agent may create files at its top
    return tree_entries(host / name)


def _change(
    task: Task, pristine: dict[bytes, Entry], after: dict[bytes, Entry]
) -> tuple[str, tuple[str, ...]]:
    """The engine's diff of the agent's tree; a grader that applies it as it comes (SWE-bench's) gets it
    without the changes to protected paths (tests, the test patch's files, test configuration, symlinks)."""
    if task.grader == "script":  # grader_script reverts them itself, after applying, and reports them
        return diff_entries(pristine, after), ()
    kept, dropped = keep_unprotected(pristine, after, task.is_protected)
    return diff_entries(pristine, kept), tuple(dropped)


def _copy_out(box: Sandbox, repo_dir: str, dest: Path) -> str | None:
    """Copy the repo's work tree to `dest` (by the engine, not by a command in the box); why not, if it
    failed."""
    try:
        box.get_dir(repo_dir, dest)
    # a link out of the repo, or no repo: the agent's doing
    except (tarfile.TarError, FileNotFoundError) as exc:
        return f"the agent's repo could not be copied out: {exc}"
    return None


def task_timeout(ctx: JobContext, task: Task) -> float:
    """The task's own agent timeout, within the one rule (it ends before its sandbox:
    evolve.engine.context)."""
    return min(task.agent_timeout_s, ctx.agent_timeout())


def evaluate_all(
    run: Run,
    node_id: str,
    tasks: list[Task],
    *,
    sandboxes: SandboxMaker,
    gateway: Channels,
    settings: EvalSettings = EvalSettings(),
    on_result=None,
) -> list[EvalResult]:
    """Evaluate one node on several tasks, one after another; `on_result(result)` after each."""
    results = []
    for task in tasks:
        result = evaluate(run, node_id, task, sandboxes=sandboxes, gateway=gateway, settings=settings)
        results.append(result)
        if on_result is not None:
            on_result(result)
    return results
