"""The expansion's sandbox work: the node's agent edits a copy of itself, then the child is validated.

`expand_child` is the expansion, one function over a job context (evolve.engine.context), run as is by
the local worker and shipped to cluster nodes. Its brief is the instructions (the engine's procedure:
a model call on the host, evolve.engine.diagnosis) or, under `[meta] procedure = "agent"`, the failure
material, from which the node's own `python -m agent diagnose` writes them first, in a sandbox of its
own (evolve.meta.procedure). The agent steps get their time from the one timeout rule, so a slow
improve step ends before its sandbox and leaves a child to judge, not a dead sandbox.

The candidates (`[meta] candidates`, `templates`, `repairs`) are made and checked one by one, and the one
that gets furthest is the child (evolve.engine.generate); the templates and repairs are made at the
locations the host's diagnosis ranked (`ranked_locations`).
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from evolve.engine.behaviour import Replay
from evolve.engine.context import ChannelSpec, JobContext
from evolve.engine.evaluate import EvalSettings
from evolve.engine.generate import ExpandSettings, Plan, best_candidate, candidate_channels, job_sandbox
from evolve.engine.jobs import ExpansionResult
from evolve.engine.repair import conversations, line_channel, repair_channel
from evolve.engine.rerun import Rerun
from evolve.meta import DiagnosisFailed
from evolve.meta.brief import focused_brief
from evolve.meta.locations import Location
from evolve.meta.modify import INSTRUCTIONS_JSON
from evolve.meta.procedure import AGENT, Material, agent_diagnose
from evolve.meta.templates import Generated, at_locations
from evolve.sandbox.types import CopyRefused, SandboxError

__all__ = ["ExpandSettings", "Expansion", "expand_child", "ranked_locations"]


@dataclass(frozen=True)
class Expansion:
    """An expansion as a worker runs it (here or shipped to a cluster node), after the host's diagnosis:
    its brief is the instructions, or the material the agent's own diagnose step reads."""

    instructions: str | Material
    settings: ExpandSettings
    replays: tuple[Replay, ...] = ()
    """The parent's failures a candidate may re-run (`settings.replays` of them, chosen by its edit from
    these, evolve.engine.behaviour): picked on the host, with the lines the spectra traced each run."""
    solve: EvalSettings = field(default_factory=EvalSettings)
    """How those re-runs solve: the run's evaluation settings, as the parent's evaluations had them."""
    data: str = ""
    """The instructions as data (`instructions.json`, JSON text; evolve.meta.modify); "" for none."""
    rerun: Rerun = field(default_factory=Rerun)
    """The parent's search tasks a candidate solves again live (`settings.rerun`, chosen on the host)."""
    seed: tuple[int, ...] = (0,)
    """Seeds the templates' order (the run seed and the search decision)."""
    failing_tests: int = 0
    """The parent's own tests that failed under the spectra (evolve.engine.spectra): with any, the templates'
    larger budget (`settings.test_templates` at `settings.test_locations`), since each candidate's own tests
    refuse it in seconds unless it fixes them."""
    screened: tuple[Generated, ...] = ()
    """Template edits that passed every own test in the spectra's screen (evolve.engine.screen): the first
    candidates, before the templates at the ranked locations."""

    def channels(self, job: str) -> tuple[ChannelSpec, ...]:
        """The agent's diagnose step's channel (with material), each line repair's and repair attempt's,
        then per candidate the modify step's and the validation's (it solves the smoke task, and runs the
        child's diagnose step under the agent's procedure)."""
        tokens = self.settings.job_tokens
        agent = isinstance(self.instructions, Material)
        repairs = self.settings.repairs * self.settings.repair_locations
        lines = self.settings.line_repairs * self.settings.line_locations
        return (
            *([ChannelSpec(f"{job}-diagnose", "diagnose", tokens)] if agent else []),
            *(line_channel(job, n, tokens) for n in range(1, lines + 1)),
            *(repair_channel(job, n, tokens) for n in range(1, repairs + 1)),
            *(
                spec
                for n in range(1, self.settings.candidates + 1)
                for spec in candidate_channels(job, n, tokens)
            ),
        )

    def __call__(self, ctx: JobContext) -> ExpansionResult:
        return expand_child(
            ctx,
            self.instructions,
            self.settings,
            replays=self.replays,
            solve=self.solve,
            data=self.data,
            rerun=self.rerun,
            seed=self.seed,
            failing_tests=self.failing_tests,
            screened=self.screened,
        )


def expand_child(
    ctx: JobContext,
    brief: str | Material,
    settings: ExpandSettings | None = None,
    *,
    replays: tuple[Replay, ...] = (),
    solve: EvalSettings | None = None,
    data: str = "",
    rerun: Rerun | None = None,
    seed: tuple[int, ...] = (0,),
    failing_tests: int = 0,
    screened: tuple[Generated, ...] = (),
) -> ExpansionResult:
    """The expansion: (the agent's diagnosis,) modify, then validate; the child's code is `ctx.log_dir /
    "child"`. `data`: the instructions as data, kept in the job's log (`instructions.json`) for each improve
    step. `failing_tests`: the parent's own tests that fail (they set the templates' budget). `screened`:
    template edits the screen kept, checked first."""
    settings = settings or ExpandSettings()
    instructions = brief if isinstance(brief, str) else None
    if data:
        (ctx.log_dir / INSTRUCTIONS_JSON).write_text(data)
    try:
        instructions = brief if isinstance(brief, str) else _diagnose(ctx, brief, settings)
        focused = focused_brief(instructions, ctx.code)
        if focused != instructions:
            (ctx.log_dir / "improve-brief.md").write_text(focused)
        plan = Plan(
            settings,
            diagnose=isinstance(brief, Material),
            replays=replays,
            solve=solve or EvalSettings(),
            rerun=rerun if rerun is not None and settings.rerun else Rerun(),
        )
        per_location, count = settings.template_budget(failing_tests)
        ranked = ranked_locations(ctx.log_dir)
        locations = ranked[:count] if per_location else ()
        made = (
            at_locations(ctx.code, locations, per_location, np.random.default_rng(list(seed)))
            if locations
            else []
        )
        first = {(g.path, g.edit.source) for g in screened}
        templates = [*screened, *(g for g in made if (g.path, g.edit.source) not in first)]
        repairs = (
            conversations(ctx.code, ranked, settings.repair_locations, code_only=settings.require_code)
            if settings.repairs
            else []
        )
        code_only = settings.require_code
        lines = (
            conversations(ctx.code, ranked, settings.line_locations, code_only=code_only, lines=True)
            if settings.line_repairs
            else []
        )
        child, verdict = best_candidate(ctx, focused, plan, templates, repairs, lines)
    except DiagnosisFailed as exc:
        return ExpansionResult(None, valid=False, reason=f"the agent's diagnosis failed: {exc}")
    except CopyRefused as exc:  # the child's own doing: a link out of its tree, a special file, over the cap
        shutil.rmtree(ctx.log_dir / "child", ignore_errors=True)
        return ExpansionResult(
            None,
            valid=False,
            reason=f"the child's code cannot be copied out: {exc}",
            instructions=instructions,
        )
    except SandboxError as exc:
        # no child: the node carries its parent's code from git, so no copy of it stays in logs/
        for code in (
            ctx.log_dir / "child",
            ctx.log_dir / "candidate",
            *ctx.log_dir.glob("candidate-*/candidate"),
        ):
            shutil.rmtree(code, ignore_errors=True)
        return ExpansionResult(None, valid=False, reason=f"sandbox failed: {exc}", instructions=instructions)
    return ExpansionResult(
        child.code_dir, valid=verdict.valid, reason=verdict.reason, instructions=instructions, tree=child.tree
    )


def ranked_locations(log_dir: Path) -> tuple[Location, ...]:
    """The ranked locations the host's diagnosis recorded beside the instructions, most suspicious first
    (none: no record, or none in it); an entry that is not a location is skipped."""
    path = log_dir / INSTRUCTIONS_JSON  # the host's diagnosis wrote it; its `locations` are the ranking
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return ()
    except (ValueError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path}: not the diagnosis's JSON record: {exc}") from exc
    found = data.get("locations") if isinstance(data, dict) else None
    ranked = [Location.from_json(item) for item in found] if isinstance(found, list) else []
    return tuple(location for location in ranked if location is not None)


def _diagnose(ctx: JobContext, material: Material, settings: ExpandSettings) -> str:
    """The node's own meta procedure writes the instructions (untrusted text, capped; logged as the host's
    are)."""
    spec, _, _ = Expansion(material, settings).channels(ctx.job)
    material.write(ctx.log_dir / "material")
    with job_sandbox(ctx, spec, settings.image) as (box, channel):
        box.put_dir(ctx.code, AGENT)
        instructions = agent_diagnose(
            box, material, ctx.log_dir, channel_env=channel.sandbox_env(), timeout_s=ctx.agent_timeout()
        )
    (ctx.log_dir / "instructions.md").write_text(instructions)
    return instructions
