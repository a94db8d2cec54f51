"""The expansion's sandbox work: the node's agent edits a copy of itself, then the child is validated.

`expand_child` is the expansion, one function over a job context (evolve.engine.context), run as is by
the local worker and shipped to cluster nodes. The diagnosis that writes its instructions is a model
call on the host (evolve.engine.diagnosis). Both agent steps get their time from the one timeout
rule, so a slow improve step ends before its sandbox and leaves a child to judge, not a dead sandbox.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from evolve.engine.context import Channel, ChannelSpec, JobContext
from evolve.engine.jobs import ExpansionResult
from evolve.meta import Modification, Verdict, self_modify, validate_child
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
    smoke_steps: int = 2
    """Step cap of the smoke task in the validation gate."""


@dataclass(frozen=True)
class Expansion:
    """An expansion as a worker runs it (here or shipped to a cluster node), after the host's diagnosis."""

    instructions: str
    settings: ExpandSettings

    def channels(self, job: str) -> tuple[ChannelSpec, ...]:
        """The modify step's channel, then the validation's (it solves the smoke task)."""
        return (ChannelSpec(f"{job}-modify", "modify", self.settings.job_tokens),
                ChannelSpec(f"{job}-validate", "solve", self.settings.job_tokens))

    def __call__(self, ctx: JobContext) -> ExpansionResult:
        return expand_child(ctx, self.instructions, self.settings)


def expand_child(ctx: JobContext, instructions: str, settings: ExpandSettings = ExpandSettings()) -> ExpansionResult:
    """The expansion: modify, then validate; the child's code is `ctx.log_dir / "child"`."""
    try:
        child = _modify(ctx, instructions, settings)
        verdict = _validate(ctx, child, settings)
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


def _modify(ctx: JobContext, instructions: str, settings: ExpandSettings) -> Modification:
    spec, _ = Expansion("", settings).channels(ctx.job)
    with _sandbox(ctx, spec, settings.image) as (box, channel):
        return self_modify(box, ctx.code, instructions, ctx.log_dir / "child", ctx.log_dir,
                           channel_env=channel.sandbox_env(), budget_steps=settings.improve_steps,
                           timeout_s=ctx.agent_timeout())


def _validate(ctx: JobContext, child: Modification, settings: ExpandSettings) -> Verdict:
    _, spec = Expansion("", settings).channels(ctx.job)
    with _sandbox(ctx, spec, settings.image) as (box, channel):
        return validate_child(box, child.code_dir, child.diff, ctx.log_dir, channel_env=channel.sandbox_env(),
                              served=lambda: ctx.channels.report(spec.job).requests,
                              smoke_steps=settings.smoke_steps, timeout_s=ctx.agent_timeout(runs=VALIDATION_RUNS))
