"""The engine worker: evaluations and expansions in sandboxes, models through the gateway.

An evaluation runs the node's agent on a task and grades it (evolve.engine.evaluate). An expansion is
the meta step: with `[meta] spectra`, first the node's recorded runs replayed under coverage in sandboxes
(evolve.engine.spectra), then a diagnosis on the host (evolve.engine.diagnosis) that reads their ranking,
then the agent edits a copy of itself and the child is validated (evolve.engine.expand). Where the sandbox
work runs is the worker's `place`: `Here` (this machine) or a cluster (evolve.cluster.head ships the same work
to a node). Either way infra attempts are retried by the one rule (evolve.engine.retry) within the runner's
job, and each attempt is a line of the job's `attempts.jsonl`. Every model call goes through the gateway.
"""

from __future__ import annotations

import json
import socket
import tempfile
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Protocol, TypeVar

from evolve.archive.records import Job, Node
from evolve.archive.store import Run
from evolve.config import MetaConfig
from evolve.engine.behaviour import failed_replays
from evolve.engine.context import Channels, SandboxMaker, Work, local_context
from evolve.engine.diagnosis import agent_files, diagnose_node
from evolve.engine.evaluate import EvalSettings, Evaluation
from evolve.engine.executors import WorkerLost
from evolve.engine.expand import ExpandSettings, Expansion
from evolve.engine.jobs import EvaluationResult, ExpansionResult
from evolve.engine.rerun import rerun_tasks
from evolve.engine.retry import InfraRetry
from evolve.engine.spectra import Spectra, SpectraResult, spectra_replays
from evolve.meta.experience import recorded_experience, with_experience
from evolve.meta.locations import Location
from evolve.meta.modify import INSTRUCTIONS_JSON
from evolve.meta.procedure import Material
from evolve.tasks.types import Task

R = TypeVar("R")


@dataclass(frozen=True)
class WorkerSettings:
    """Limits of the jobs a worker runs (their time: the sandboxes' wall clock, evolve.engine.context)."""

    eval: EvalSettings = field(default_factory=EvalSettings)
    expand: ExpandSettings = field(default_factory=ExpandSettings)
    meta: MetaConfig = field(default_factory=MetaConfig)
    """The meta step's style (`compact` or `dgm`)."""
    pooled_experience: bool = False
    """GEA: append the parent group's pooled experience (evolve.meta.experience) to the instructions."""


class Place(Protocol):
    """Where a job's sandbox work runs; raises `WorkerLost` when the machine running it went away."""

    def run_work(self, job: Job, node: Node, work: Work[R]) -> tuple[R, str]:
        """The work's result and where it ran."""
        ...


@dataclass(frozen=True)
class Here:
    """This machine: the node's code checked out from the run, logs straight into the run."""

    run: Run
    sandboxes: SandboxMaker
    channels: Channels

    def run_work(self, job: Job, node: Node, work: Work[R]) -> tuple[R, str]:
        with local_context(
            self.run, job.id, node.id, sandboxes=self.sandboxes, channels=self.channels
        ) as ctx:
            return work(ctx), socket.gethostname()


@dataclass(frozen=True)
class Lost:
    """Every attempt lost its worker (the last one's reason)."""

    why: str
    attempts: int


class EngineWorker:
    """Runs the jobs of one run; safe to call from several executor threads at once.

    `sandboxes` runs the work here; a `place` (a cluster) runs it there instead."""

    def __init__(
        self,
        run: Run,
        tasks: Mapping[str, Task],
        *,
        gateway: Channels,
        settings: WorkerSettings,
        seed: int,
        sandboxes: SandboxMaker | None = None,
        place: Place | None = None,
        cancel: Callable[[], object] | None = None,
    ) -> None:
        if place is None:
            if sandboxes is None:
                raise ValueError("EngineWorker needs sandboxes (to work here) or a place")
            place = Here(run, sandboxes, gateway)
        self.run = run
        self.tasks = dict(tasks)
        self.gateway = gateway
        self.settings = settings
        self.seed = seed
        self.place = place
        self._retry = InfraRetry(settings.eval.infra_retries)
        self._cancel = cancel
        self._cancelled = threading.Event()

    def evaluate(self, job: Job, node: Node, task: str, split: str) -> EvaluationResult:
        result = self._attempts(
            job, node, Evaluation(self.tasks[task], self.settings.eval), lambda r: r.outcome == "infra"
        )
        return EvaluationResult("infra", detail=result.why) if isinstance(result, Lost) else result

    def expand(self, job: Job, node: Node) -> ExpansionResult:
        spectra = self._spectra(job, node)
        instructions = self._diagnose(job, node, spectra.locations)
        if isinstance(instructions, ExpansionResult):
            return instructions
        # A sandbox failure is the expansion's own result (an invalid child): the agent may stop its sandbox.
        expand = self.settings.expand
        # the failures a candidate's behaviour may be replayed on: those the spectra traced (with the lines
        # the node ran there) and enough others
        pool = max(expand.replays, self.settings.meta.spectra) if expand.replays else 0
        failed = failed_replays(self.run, node.id, self.tasks, pool)
        replays = tuple(replace(r, ran=spectra.ran.get(r.task.id)) for r in failed)
        rerun = rerun_tasks(self.run, node.id, self.tasks, expand.rerun, expand.rerun_passed)
        data = self.run.log_dir(job.id) / INSTRUCTIONS_JSON  # the host's diagnosis wrote it (not the agent's)
        expansion = Expansion(
            instructions,
            expand,
            replays,
            self.settings.eval,
            data.read_text() if isinstance(instructions, str) and data.is_file() else "",
            rerun=rerun,
            seed=(self.seed, job.draw),
            failing_tests=len(spectra.failing_tests),
            screened=spectra.screen.kept,
        )
        result = self._attempts(job, node, expansion, lambda r: False)
        if isinstance(result, Lost):
            # Not an invalid child: the runner marks the job failed, counts no expansion, and may expand
            # again.
            raise WorkerLost(f"{result.attempts} attempts lost their worker; last: {result.why}")
        return result

    def _attempts(
        self, job: Job, node: Node, work: Work[R], infra: Callable[[R], bool], *, name: str | None = None
    ) -> R | Lost:
        """The work at the worker's place, retried by the one infra rule; each attempt logged (with the
        work's `name` when the job runs more than its main work)."""
        named = {"work": name} if name is not None else {}

        def attempt(number: int) -> R | Lost:
            try:
                result, where = self.place.run_work(job, node, work)
            except WorkerLost as exc:
                self._log(job, {"attempt": number, **named, "lost": f"worker lost: {exc}"})
                return Lost(f"worker lost: {exc}", number + 1)
            self._log(
                job, {"attempt": number, **named, "where": where, "outcome": getattr(result, "outcome", None)}
            )
            return result

        return self._retry.run(
            attempt, lambda r: isinstance(r, Lost) or infra(r), stop=self._cancelled.is_set
        )

    def _log(self, job: Job, line: dict) -> None:
        with (self.run.log_dir(job.id) / "attempts.jsonl").open("a") as log:
            log.write(json.dumps(line) + "\n")

    def _spectra(self, job: Job, node: Node) -> SpectraResult:
        """The node's lines ranked by execution spectra (`[meta] spectra`; evolve.engine.spectra): its failed
        and passed search evaluations replayed, and its own tests, run at the worker's place like the
        expansion's other sandbox work, for the engine's compact diagnosis; nothing when off. Their cost
        (replays, sandboxes, seconds) is the expansion's, written to the job's `spectra.json`."""
        meta = self.settings.meta
        if meta.spectra == 0:  # the config allows it only for the compact diagnosis, on the host
            return SpectraResult((), 0, 0, 0.0)
        replays = spectra_replays(self.run, node.id, self.tasks, failing=meta.spectra, passing=meta.spectra)
        if not any(replay.outcome == "fail" for replay in replays):
            replays = ()  # only failing runs point anywhere: the own tests may still fail
        spectra = Spectra(
            replays,
            self.settings.eval,
            tests_image=self.settings.expand.image,
            screen=meta.screen,
            seed=(self.seed, job.draw),
        )
        result = self._attempts(job, node, spectra, lambda r: False, name="spectra")
        if isinstance(result, Lost):  # only a ranking: the diagnosis goes on with its other sources
            result = SpectraResult(
                (), 0, 0, 0.0, f"{result.attempts} attempts lost their worker; last: {result.why}"
            )
        (self.run.log_dir(job.id) / "spectra.json").write_text(json.dumps(result.to_json(), indent=1))
        return result

    def _diagnose(
        self, job: Job, node: Node, ranked: tuple[Location, ...] = ()
    ) -> str | Material | ExpansionResult:
        """The diagnosis, on this host (a model call, no sandbox): instructions (or the material of the
        agent's own diagnose step, `[meta] procedure = "agent"`), or the failed expansion. `ranked`: the
        spectra's ranking (`_spectra`), merged into the locations it reads."""
        # GEA: the group's pooled experience goes into the instructions, or under the agent's own meta
        # procedure into the material its diagnose step reads
        pool = recorded_experience(self.run, job) if self.settings.pooled_experience else None
        with tempfile.TemporaryDirectory(prefix="evolve-expand-") as tmp:
            parent_code = self.run.checkout(node.id, Path(tmp) / "parent")
            result = diagnose_node(
                self.run,
                job,
                node,
                self.tasks,
                self.gateway,
                agent_files(parent_code),
                seed=self.seed,
                job_tokens=self.settings.expand.job_tokens,
                meta=self.settings.meta,
                parent_code=parent_code,
                extra_material={"experience.md": pool} if pool is not None else None,
                ranked=ranked,
            )
        if isinstance(result, str) and pool is not None:
            return with_experience(result, pool)
        return result

    def cancel(self) -> None:
        self._cancelled.set()  # infra attempts are not tried again
        if self._cancel is not None:
            self._cancel()
