"""The expansion's sandbox work: the node's agent edits a copy of itself, then the child is validated.

`expand_child` is the expansion, one function over a job context (evolve.engine.context), run as is by
the local worker and shipped to cluster nodes. Its brief is the instructions (the engine's procedure:
a model call on the host, evolve.engine.diagnosis) or, under `[meta] procedure = "agent"`, the failure
material, from which the node's own `python -m agent diagnose` writes them first, in a sandbox of its
own (evolve.meta.procedure). The agent steps get their time from the one timeout rule, so a slow
improve step ends before its sandbox and leaves a child to judge, not a dead sandbox.

With `candidates = k` the improve step runs k times from the parent's code, each at its own temperature
(`EVOLVE_TEMPERATURE`, a hint like `EVOLVE_CONTEXT_CHARS`) with its own model channels; each candidate goes
through the cheap filters (evolve.meta.candidates), then (with `replays`) the parent's replayed failures
(evolve.engine.behaviour) and then the gate, one after another, and the first that
passes all is the child. Every candidate's verdict is written to the job's `candidates.jsonl`
(evolve.archive.candidates); candidate n > 1 logs under `candidate-n/`. With one candidate the job's
logs and channels are those of an expansion without candidates.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path

from evolve.archive.candidates import Candidate, write_candidates
from evolve.engine.behaviour import Replay, acts_as_parent
from evolve.engine.context import Channel, ChannelSpec, JobContext
from evolve.engine.evaluate import EvalSettings
from evolve.engine.jobs import ExpansionResult
from evolve.meta import DiagnosisFailed, Modification, Verdict, self_modify, validate_child
from evolve.meta.brief import focused_brief
from evolve.meta.candidates import BEHAVIOUR, changed_lines, cheap_filters, furthest, temperatures
from evolve.meta.modify import INSTRUCTIONS_JSON
from evolve.meta.procedure import AGENT, Material, agent_diagnose
from evolve.meta.validate import SMOKE_STEPS
from evolve.sandbox.types import CopyRefused, Sandbox, SandboxError

VALIDATION_RUNS = 2
"""The gate's agent runs (its own tests, the smoke task) share one sandbox; each gets this share."""


@dataclass(frozen=True)
class ExpandSettings:
    image: str = "evolve-base:latest"
    improve_steps: int = 12
    """Step cap of `python -m agent improve`."""
    job_tokens: int = 200_000
    """Tokens the gateway serves to one model role of one job."""
    smoke_steps: int = SMOKE_STEPS
    """Step cap of the smoke task in the validation gate."""
    candidates: int = 1
    """Improve runs sampled per expansion (`[meta] candidates`); the first that passes every filter is the child."""
    temperature: tuple[float, float] = (0.2, 1.0)
    """The spread of the candidates' sampling temperatures, lowest first (`[meta] temperature`)."""
    require_code: bool = False
    """Refuse a candidate whose edit is not a code edit (`[meta] require_code`)."""
    replays: int = 0
    """The parent's failed search tasks each candidate re-runs against their recorded model replies
    (`[meta] replays`; evolve.engine.behaviour)."""

    def temperatures(self) -> tuple[float, ...]:
        return temperatures(self.candidates, *self.temperature)


@dataclass(frozen=True)
class Expansion:
    """An expansion as a worker runs it (here or shipped to a cluster node), after the host's diagnosis:
    its brief is the instructions, or the material the agent's own diagnose step reads."""

    instructions: str | Material
    settings: ExpandSettings
    replays: tuple[Replay, ...] = ()
    """The parent's failures a candidate re-runs (`settings.replays` of them, chosen on the host)."""
    solve: EvalSettings = field(default_factory=EvalSettings)
    """How those re-runs solve: the run's evaluation settings, as the parent's evaluations had them."""
    data: str = ""
    """The instructions as data (`instructions.json`, JSON text; evolve.meta.modify); "" for none."""

    def channels(self, job: str) -> tuple[ChannelSpec, ...]:
        """The agent's diagnose step's channel (with material), then per candidate the modify step's and the
        validation's (it solves the smoke task, and runs the child's diagnose step under the agent's procedure)."""
        tokens = self.settings.job_tokens
        agent = isinstance(self.instructions, Material)
        return (*([ChannelSpec(f"{job}-diagnose", "diagnose", tokens)] if agent else []),
                *(spec for n in range(1, self.settings.candidates + 1) for spec in _candidate_channels(job, n, tokens)))

    def __call__(self, ctx: JobContext) -> ExpansionResult:
        return expand_child(ctx, self.instructions, self.settings, replays=self.replays, solve=self.solve,
                            data=self.data)


def expand_child(ctx: JobContext, brief: str | Material, settings: ExpandSettings = ExpandSettings(), *,
                 replays: tuple[Replay, ...] = (), solve: EvalSettings | None = None,
                 data: str = "") -> ExpansionResult:
    """The expansion: (the agent's diagnosis,) modify, then validate; the child's code is `ctx.log_dir / "child"`.
    `data`: the instructions as data, kept in the job's log (`instructions.json`) for each improve step."""
    instructions = brief if isinstance(brief, str) else None
    if data:
        (ctx.log_dir / INSTRUCTIONS_JSON).write_text(data)
    try:
        instructions = brief if isinstance(brief, str) else _diagnose(ctx, brief, settings)
        focused = focused_brief(instructions, ctx.code)
        if focused != instructions:
            (ctx.log_dir / "improve-brief.md").write_text(focused)
        child, verdict = _candidates(ctx, focused, settings, diagnose=isinstance(brief, Material), replays=replays,
                                     solve=solve or EvalSettings())
    except DiagnosisFailed as exc:
        return ExpansionResult(None, valid=False, reason=f"the agent's diagnosis failed: {exc}")
    except CopyRefused as exc:  # the child's own doing: a link out of its tree, a special file, over the cap
        shutil.rmtree(ctx.log_dir / "child", ignore_errors=True)
        return ExpansionResult(None, valid=False, reason=f"the child's code cannot be copied out: {exc}",
                               instructions=instructions)
    except SandboxError as exc:
        # no child: the node carries its parent's code from git, so no copy of it stays in logs/
        for code in (ctx.log_dir / "child", ctx.log_dir / "candidate", *ctx.log_dir.glob("candidate-*/candidate")):
            shutil.rmtree(code, ignore_errors=True)
        return ExpansionResult(None, valid=False, reason=f"sandbox failed: {exc}", instructions=instructions)
    return ExpansionResult(child.code_dir, valid=verdict.valid, reason=verdict.reason, instructions=instructions,
                           tree=child.tree)


@contextmanager
def _sandbox(ctx: JobContext, spec: ChannelSpec, image: str) -> Iterator[tuple[Sandbox, Channel]]:
    """A fresh sandbox with the model channel of `spec` mounted; the channel closes with it."""
    channel = ctx.channels.open_job(spec.job, ctx.node_id, spec.role, spec.tokens)
    try:
        with ctx.sandboxes(image, spec.job, gateway_socket=channel.socket_path) as box:
            yield box, channel
    finally:
        ctx.channels.close_job(spec.job)


def _diagnose(ctx: JobContext, material: Material, settings: ExpandSettings) -> str:
    """The node's own meta procedure writes the instructions (untrusted text, capped; logged as the host's are)."""
    spec, _, _ = Expansion(material, settings).channels(ctx.job)
    material.write(ctx.log_dir / "material")
    with _sandbox(ctx, spec, settings.image) as (box, channel):
        box.put_dir(ctx.code, AGENT)
        instructions = agent_diagnose(box, material, ctx.log_dir, channel_env=channel.sandbox_env(),
                                      timeout_s=ctx.agent_timeout())
    (ctx.log_dir / "instructions.md").write_text(instructions)
    return instructions


def _candidate_channels(job: str, number: int, tokens: int) -> tuple[ChannelSpec, ChannelSpec]:
    """Candidate `number`'s modify and validation channels (the first keeps the names of one candidate)."""
    suffix = "" if number == 1 else f"-{number}"
    return ChannelSpec(f"{job}-modify{suffix}", "modify", tokens), ChannelSpec(f"{job}-validate{suffix}", "solve", tokens)


def _candidates(ctx: JobContext, instructions: str, settings: ExpandSettings, *, diagnose: bool,
                replays: tuple[Replay, ...], solve: EvalSettings) -> tuple[Modification, Verdict]:
    """Sample, filter and gate the candidates one by one until one passes; the child and its verdict (with
    none passing: the candidate that got furthest, refused). The child's code ends at `log_dir / "child"`."""
    records: list[Candidate] = []
    tried: list[tuple[Modification, Verdict]] = []
    several = settings.candidates > 1
    for number, temperature in enumerate(settings.temperatures(), 1):
        started = time.monotonic()
        log_dir = ctx.log_dir / f"candidate-{number}" if number > 1 else ctx.log_dir
        log_dir.mkdir(parents=True, exist_ok=True)
        modify, validate = _candidate_channels(ctx.job, number, settings.job_tokens)
        dest = log_dir / ("candidate" if several else "child")
        child = _modify(ctx, modify, instructions, settings, dest, log_dir, temperature)
        filtered = cheap_filters(ctx.code, child.code_dir, child.diff, require_code=settings.require_code)
        stage, reason = filtered.stage, filtered.reason
        if stage is None and replays:
            reason = acts_as_parent(ctx, child.code_dir, replays, solve, log_dir)
            stage = BEHAVIOUR if reason is not None else None
        if stage is None:
            gate = _validate(ctx, validate, child, settings, log_dir, diagnose=diagnose)
            stage, reason = (None, None) if gate.valid else (gate.check or "applies", gate.reason)
        verdict = Verdict(stage is None, reason)
        tried.append((child, verdict))
        records.append(Candidate(number, temperature, stage is None, stage, reason, filtered.kind.value,
                                 changed_lines(child.diff), round(time.monotonic() - started, 1)))
        if verdict.valid:
            break
    pick = furthest([r.stage for r in records])
    child, verdict = tried[pick]
    if several:
        write_candidates(ctx.log_dir, records)
        _keep_only(ctx.log_dir, child.code_dir, [c.code_dir for c, _ in tried])
        child = replace(child, code_dir=ctx.log_dir / "child")
        if not verdict.valid:
            verdict = Verdict(False, f"{verdict.reason} (the furthest of {len(records)} candidates, "
                                     f"candidate {pick + 1}; every verdict is in the job's candidates.jsonl)")
    return child, verdict


def _keep_only(log_dir: Path, kept: Path, every: list[Path]) -> None:
    """The chosen candidate's code becomes the job's child; the others' code goes (their patches stay)."""
    shutil.rmtree(log_dir / "child", ignore_errors=True)
    shutil.move(kept, log_dir / "child")
    for code in every:
        if code != kept:
            shutil.rmtree(code, ignore_errors=True)


def _modify(ctx: JobContext, spec: ChannelSpec, instructions: str, settings: ExpandSettings, dest: Path,
            log_dir: Path, temperature: float) -> Modification:
    with _sandbox(ctx, spec, settings.image) as (box, channel):
        env = {**channel.sandbox_env(), "EVOLVE_TEMPERATURE": f"{temperature:g}"}
        data = ctx.log_dir / INSTRUCTIONS_JSON
        return self_modify(box, ctx.code, instructions, dest, log_dir, channel_env=env,
                           data=data.read_text() if data.is_file() else "",
                           budget_steps=settings.improve_steps, timeout_s=ctx.agent_timeout())


def _validate(ctx: JobContext, spec: ChannelSpec, child: Modification, settings: ExpandSettings, log_dir: Path, *,
              diagnose: bool) -> Verdict:
    with _sandbox(ctx, spec, settings.image) as (box, channel):
        return validate_child(box, child.code_dir, child.diff, log_dir, channel_env=channel.sandbox_env(),
                              served=lambda: ctx.channels.report(spec.job).requests,
                              smoke_steps=settings.smoke_steps, timeout_s=ctx.agent_timeout(runs=VALIDATION_RUNS),
                              diagnose=diagnose)
