"""The real worker: evaluations and expansions in Docker sandboxes, models through the gateway.

An evaluation runs the node's agent on a task and grades it (evolve.engine.evaluate). An expansion is the
meta step (evolve.meta): choose a problem from the node's failures, diagnose it with the
`diagnose` model, let the agent edit a copy of itself with the `modify` model, and validate the
child (its tests, and a smoke task solved with the `solve` model). Every model call of every job
goes through the gateway, so it is counted, budgeted and recorded for replay.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from evolve.archive.records import FAILURE_OUTCOMES, Job, Node
from evolve.archive.store import Run
from evolve.config import MetaConfig
from evolve.engine.evaluate import Channels, EvalSettings, SandboxMaker, run_task
from evolve.engine.jobs import EvaluationResult, ExpansionResult
from evolve.meta import DiagnosisFailed, choose_problem, diagnose, read_failure, self_modify, validate_child
from evolve.meta.dgm import dgm_instructions
from evolve.sandbox.types import SandboxError
from evolve.tasks.types import Task


@dataclass(frozen=True)
class WorkerSettings:
    """Limits of the jobs a worker runs."""

    eval: EvalSettings = field(default_factory=EvalSettings)
    image: str = "evolve-base:latest"
    improve_steps: int = 12
    """Step cap of `python -m agent improve`."""
    job_tokens: int = 200_000
    """Tokens the gateway serves to one model role of one job."""
    job_timeout_s: float = 900.0
    """The sandbox's wall clock (its container dies then); agent runs get `agent_timeout_s`."""
    smoke_steps: int = 2
    """Step cap of the smoke task in the validation gate."""
    meta: MetaConfig = field(default_factory=MetaConfig)
    """The meta step's style (`compact` or `dgm`)."""


    @property
    def agent_timeout_s(self) -> float:
        """An agent run must end before its container does, leaving time to take the diff."""
        return agent_timeout(self.job_timeout_s)


def agent_timeout(wall_clock_s: float) -> float:
    return wall_clock_s - min(60.0, 0.2 * wall_clock_s)


def agent_files(code: Path) -> list[str]:
    """The agent's Python files, as the diagnosis names them."""
    return sorted(str(p.relative_to(code)) for p in code.rglob("*.py"))


def diagnose_node(run: Run, job: Job, node: Node, tasks: Mapping[str, Task], gateway, files: list[str], *,
                  seed: int, job_tokens: int, meta: MetaConfig | None = None,
                  parent_code: Path | None = None) -> str | ExpansionResult:
    """Choose a problem from the node's failures and diagnose it through the gateway, on the host.

    Returns the rendered instructions (also written to the job's log), or the failed expansion."""
    log_dir = run.log_dir(job.id)
    if meta is not None and meta.style == "dgm" and parent_code is not None:
        return _diagnose_dgm(run, job, node, tasks, gateway, parent_code, seed=seed, job_tokens=job_tokens,
                             meta=meta)
    failures = [read_failure(e) for e in run.evaluations(node.id, split="dev") if e.outcome in FAILURE_OUTCOMES]
    statements = {f.task: tasks[f.task].statement for f in failures if f.task in tasks}
    # seeded by the search decision, which a re-run after a resume shares (its job id is new)
    draw = job.decision if job.decision is not None else job.id
    problem = choose_problem(failures, statements, np.random.default_rng([seed, draw]))
    (log_dir / "problem.json").write_text(json.dumps(problem.__dict__, indent=2))
    diagnose_job = f"{job.id}-diagnose"
    gateway.open_job(diagnose_job, node.id, "diagnose", job_tokens)
    try:
        instructions = diagnose(GatewayCompleter(gateway, diagnose_job), problem, files)
    except DiagnosisFailed as exc:
        return ExpansionResult(None, valid=False, reason=f"diagnosis failed: {exc}")
    finally:
        gateway.close_job(diagnose_job)
    text = instructions.render()
    (log_dir / "instructions.md").write_text(text)
    return text


def _diagnose_dgm(run: Run, job: Job, node: Node, tasks: Mapping[str, Task], gateway, parent_code: Path, *,
                  seed: int, job_tokens: int, meta: MetaConfig) -> str | ExpansionResult:
    """DGM's meta step (evolve/meta/dgm.py); its records are dgm-entry.json and diagnosis.json."""
    diagnose_job = f"{job.id}-diagnose"
    gateway.open_job(diagnose_job, node.id, "diagnose", job_tokens)
    try:
        text = dgm_instructions(run, node, {t: task.statement for t, task in tasks.items()}, parent_code,
                                GatewayCompleter(gateway, diagnose_job), rng=np.random.default_rng([seed, job.id]),
                                show_test_results=meta.show_test_results, log_dir=run.log_dir(job.id))
    except DiagnosisFailed as exc:
        return ExpansionResult(None, valid=False, reason=f"diagnosis failed: {exc}")
    finally:
        gateway.close_job(diagnose_job)
    (run.log_dir(job.id) / "instructions.md").write_text(text)
    return text


class GatewayCompleter:
    """`diagnose`'s completion function, served by the gateway so it is counted and recorded."""

    def __init__(self, gateway, job_id: str) -> None:
        self._gateway = gateway
        self._job_id = job_id

    def __call__(self, messages: list[dict], temperature: float | None = None) -> str:
        request = {"messages": messages} if temperature is None else {"messages": messages, "temperature": temperature}
        status, body = self._gateway.handle(self._job_id, "POST", "/v1/chat/completions", json.dumps(request).encode())
        reply = json.loads(body)
        if status != 200:
            raise DiagnosisFailed(f"the gateway answered {status}: {reply.get('error', reply)}")
        return reply["choices"][0]["message"].get("content") or ""


class EngineWorker:
    """Runs the jobs of one run; safe to call from several executor threads at once."""

    def __init__(self, run: Run, tasks: Mapping[str, Task], *, sandboxes: SandboxMaker, gateway: Channels,
                 settings: WorkerSettings, seed: int, cancel=None) -> None:
        self.run = run
        self.tasks = dict(tasks)
        self.sandboxes = sandboxes
        self.gateway = gateway
        self.settings = settings
        self.seed = seed
        self._cancel = cancel

    def evaluate(self, job: Job, node: Node, task: str, split: str) -> EvaluationResult:
        for _ in range(self.settings.eval.infra_retries + 1):  # infra is retried within the job
            result = run_task(self.run, node.id, self.tasks[task], job.id, sandboxes=self.sandboxes,
                              gateway=self.gateway, settings=self.settings.eval)
            if result.outcome != "infra":
                break
        return EvaluationResult(result.outcome, result.duration_s, result.tokens,
                                log_path=str(result.log_dir) if result.log_dir else None, detail=result.detail)

    def expand(self, job: Job, node: Node) -> ExpansionResult:
        log_dir = self.run.log_dir(job.id)
        with tempfile.TemporaryDirectory(prefix="evolve-expand-") as tmp:
            parent_code = self.run.checkout(node.id, Path(tmp) / "parent")
            text = diagnose_node(self.run, job, node, self.tasks, self.gateway, agent_files(parent_code),
                                 seed=self.seed, job_tokens=self.settings.job_tokens, meta=self.settings.meta,
                                 parent_code=parent_code)
            if isinstance(text, ExpansionResult):
                return text
            try:
                child = self._modify(job, node, parent_code, text, log_dir)
                verdict = self._validate(job, node, child, log_dir)
            except SandboxError as exc:
                # no child: the node carries its parent's code from git, so no copy of it stays in logs/
                shutil.rmtree(log_dir / "child", ignore_errors=True)
                return ExpansionResult(None, valid=False, reason=f"sandbox failed: {exc}", instructions=text)
        return ExpansionResult(child.code_dir, valid=verdict.valid, reason=verdict.reason, instructions=text)

    def _modify(self, job: Job, node: Node, parent_code: Path, instructions: str, log_dir: Path):
        channel = self.gateway.open_job(f"{job.id}-modify", node.id, "modify", self.settings.job_tokens)
        try:
            with self.sandboxes(self.settings.image, f"{job.id}-modify", gateway_socket=channel.socket_path) as box:
                return self_modify(box, parent_code, instructions, log_dir / "child", log_dir,
                                   channel_env=channel.sandbox_env(), budget_steps=self.settings.improve_steps,
                                   timeout_s=self.settings.agent_timeout_s)
        finally:
            self.gateway.close_job(f"{job.id}-modify")

    def _validate(self, job: Job, node: Node, child, log_dir: Path):
        channel = self.gateway.open_job(f"{job.id}-validate", node.id, "solve", self.settings.job_tokens)
        try:
            with self.sandboxes(self.settings.image, f"{job.id}-validate", gateway_socket=channel.socket_path) as box:
                return validate_child(box, child.code_dir, child.diff, log_dir, channel_env=channel.sandbox_env(),
                                      served=lambda: self.gateway.report(f"{job.id}-validate").requests,
                                      smoke_steps=self.settings.smoke_steps, timeout_s=self.settings.agent_timeout_s / 2)
        finally:
            self.gateway.close_job(f"{job.id}-validate")

    def cancel(self) -> None:
        if self._cancel is not None:
            self._cancel()
