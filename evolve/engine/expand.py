"""The expansion's sandbox work: the node's agent edits a copy of itself, then the child is validated.

`expand_child` is the expansion, one function over a job context (evolve.engine.context), run as is by
the local worker and shipped to cluster nodes. Its brief is the instructions (the engine's procedure:
a model call on the host, evolve.engine.diagnosis) or, under `[meta] procedure = "agent"`, the failure
material, from which the node's own `python -m agent diagnose` writes them first, in a sandbox of its
own (evolve.meta.procedure). The agent steps get their time from the one timeout rule, so a slow
improve step ends before its sandbox and leaves a child to judge, not a dead sandbox.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from evolve.engine.context import Channel, ChannelSpec, JobContext
from evolve.engine.jobs import ExpansionResult
from evolve.meta import DiagnosisFailed, Modification, Verdict, self_modify, validate_child
from evolve.meta.procedure import AGENT, Material, agent_diagnose
from evolve.meta.validate import SMOKE_STEPS
from evolve.sandbox.types import Sandbox, SandboxError

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


@dataclass(frozen=True)
class Expansion:
    """An expansion as a worker runs it (here or shipped to a cluster node), after the host's diagnosis:
    its brief is the instructions, or the material the agent's own diagnose step reads."""

    instructions: str | Material
    settings: ExpandSettings

    def channels(self, job: str) -> tuple[ChannelSpec, ...]:
        """The agent's diagnose step's channel (with material), the modify step's, then the validation's
        (it solves the smoke task, and runs the child's diagnose step under the agent's procedure)."""
        tokens = self.settings.job_tokens
        agent = isinstance(self.instructions, Material)
        return (*([ChannelSpec(f"{job}-diagnose", "diagnose", tokens)] if agent else []),
                ChannelSpec(f"{job}-modify", "modify", tokens), ChannelSpec(f"{job}-validate", "solve", tokens))

    def __call__(self, ctx: JobContext) -> ExpansionResult:
        return expand_child(ctx, self.instructions, self.settings)


def expand_child(ctx: JobContext, brief: str | Material, settings: ExpandSettings = ExpandSettings()) -> ExpansionResult:
    """The expansion: (the agent's diagnosis,) modify, then validate; the child's code is `ctx.log_dir / "child"`."""
    instructions = brief if isinstance(brief, str) else None
    try:
        instructions = brief if isinstance(brief, str) else _diagnose(ctx, brief, settings)
        child = _modify(ctx, instructions, settings)
        verdict = _validate(ctx, child, settings, diagnose=isinstance(brief, Material))
    except DiagnosisFailed as exc:
        return ExpansionResult(None, valid=False, reason=f"the agent's diagnosis failed: {exc}")
    except SandboxError as exc:
        # no child: the node carries its parent's code from git, so no copy of it stays in logs/
        shutil.rmtree(ctx.log_dir / "child", ignore_errors=True)
        return ExpansionResult(None, valid=False, reason=f"sandbox failed: {exc}", instructions=instructions)
    return ExpansionResult(child.code_dir, valid=verdict.valid, reason=verdict.reason, instructions=instructions)


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


def _modify(ctx: JobContext, instructions: str, settings: ExpandSettings) -> Modification:
    spec, _ = Expansion("", settings).channels(ctx.job)
    with _sandbox(ctx, spec, settings.image) as (box, channel):
        return self_modify(box, ctx.code, instructions, ctx.log_dir / "child", ctx.log_dir,
                           channel_env=channel.sandbox_env(), budget_steps=settings.improve_steps,
                           timeout_s=ctx.agent_timeout())


def _validate(ctx: JobContext, child: Modification, settings: ExpandSettings, *, diagnose: bool) -> Verdict:
    _, spec = Expansion("", settings).channels(ctx.job)
    with _sandbox(ctx, spec, settings.image) as (box, channel):
        return validate_child(box, child.code_dir, child.diff, ctx.log_dir, channel_env=channel.sandbox_env(),
                              served=lambda: ctx.channels.report(spec.job).requests,
                              smoke_steps=settings.smoke_steps, timeout_s=ctx.agent_timeout(runs=VALIDATION_RUNS),
                              diagnose=diagnose)
