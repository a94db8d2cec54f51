"""Generate and validate: an expansion's candidates, made one by one and each checked cheapest first.

The makers (`[meta] templates`, `repairs`, `candidates`): template candidates (evolve.meta.templates, no
model) at the top `locations` of the ranking the diagnosis recorded (`instructions.json` in the job's log;
none there: no templates), made first since they cost no model time; then the model's repairs of the
ranked functions (evolve.engine.repair), each told why the attempts before it were refused; then the
node's own improve step, once per temperature (`EVOLVE_TEMPERATURE`, a hint like `EVOLVE_CONTEXT_CHARS`),
each with its own model channels.

The checks: the cheap filters (evolve.meta.candidates), the candidate's own tests (the gate's first
checks, in a sandbox), its replayed behaviour on the parent's failures (evolve.engine.behaviour), a live
re-run of the parent's search tasks (evolve.engine.rerun), then the gate. Without a re-run the first
candidate the gate passes is the child; with one, the survivors go to the gate in order of how many of
the parent's failures they fixed, and a survivor that fixed every re-run failure ends the sampling (none
can fix more). A candidate whose sandbox fails is its own record (stage `sandbox`) and the next goes on;
the run's sandboxes closing ends the expansion at once. Every candidate's verdict is written to the
job's `candidates.jsonl` (evolve.archive.candidates); candidate n > 1 logs under `candidate-n/`. With one
candidate the job's logs and channels are those of an expansion without candidates.
"""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import TypeVar

from evolve.archive.candidates import Candidate, write_candidates
from evolve.engine.behaviour import Replay, acts_as_parent
from evolve.engine.context import Channel, ChannelSpec, JobContext
from evolve.engine.evaluate import EvalSettings
from evolve.engine.repair import (
    Conversation,
    edited_child,
    line_channel,
    make_line_repair,
    make_repair,
    repair_channel,
)
from evolve.engine.rerun import Rerun, rerun_candidate
from evolve.meta import Modification, Verdict, self_modify, validate_child
from evolve.meta.candidates import (
    BEHAVIOUR,
    RERUN,
    SANDBOX,
    STAGES,
    VALIDATED,
    Filtered,
    changed_lines,
    cheap_filters,
    furthest,
    temperatures,
)
from evolve.meta.locations import Location
from evolve.meta.modify import INSTRUCTIONS_JSON
from evolve.meta.templates import Generated
from evolve.meta.validate import SMOKE_STEPS, own_tests
from evolve.sandbox.types import CopyRefused, Sandbox, SandboxError, SandboxesClosed

T = TypeVar("T")

PROBLEM_CHARS = 400
"""The diagnosis's problem as a repair is told it."""
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
    """Improve runs sampled per expansion (`[meta] candidates`); the first that passes every filter is the
    child."""
    temperature: tuple[float, float] = (0.2, 1.0)
    """The spread of the candidates' sampling temperatures, lowest first (`[meta] temperature`)."""
    require_code: bool = False
    """Refuse a candidate whose edit is not a code edit (`[meta] require_code`)."""
    replays: int = 0
    """The parent's failed search tasks each candidate re-runs against their recorded model replies
    (`[meta] replays`; evolve.engine.behaviour)."""
    templates: int = 0
    """Template candidates per ranked location (`[meta] templates`; evolve.meta.templates)."""
    locations: int = 2
    """The top-ranked locations templates are made at (`[meta] locations`)."""
    test_templates: int = 0
    """Template candidates per ranked location where the parent fails its own tests (`[meta]
    test_templates`; 0: `templates`): each is refused by its own tests in seconds unless it fixes them."""
    test_locations: int = 0
    """And the top-ranked locations they are made at (`[meta] test_locations`; 0: `locations`)."""
    rerun: int = 0
    """The parent's failed search tasks each candidate solves again live (`[meta] rerun`;
    evolve.engine.rerun)."""
    rerun_passed: int = 1
    """And the parent's passed search tasks it must still pass (`[meta] rerun_passed`)."""
    repairs: int = 0
    """Model repair attempts at each ranked location, each told why the ones before were refused (`[meta]
    repairs`; evolve.engine.repair)."""
    repair_locations: int = 2
    """The top-ranked locations (one a function) the repairs are made at (`[meta] repair_locations`)."""
    line_repairs: int = 0
    """Model samples of each ranked line itself (`[meta] line_repairs`; evolve.engine.repair)."""
    line_locations: int = 4
    """The top-ranked lines the line repairs are made at (`[meta] line_locations`)."""

    def temperatures(self) -> tuple[float, ...]:
        return temperatures(self.candidates, *self.temperature)

    def template_budget(self, failing_tests: int) -> tuple[int, int]:
        """(template candidates per location, locations) for a parent that fails `failing_tests` of its own
        tests: the larger budget where it fails any and one is set."""
        if failing_tests and self.test_templates:
            return self.test_templates, self.test_locations or self.locations
        return self.templates, self.locations

    @property
    def validating(self) -> bool:
        """Generate and validate: own tests before the replay, a live re-run, the survivor that fixes most."""
        return self.templates > 0 or self.rerun > 0 or self.repairs > 0 or self.line_repairs > 0

    def repair_temperatures(self) -> tuple[float, ...]:
        """One temperature per repair attempt at a location, lowest first (`[meta] temperature`)."""
        return temperatures(self.repairs, *self.temperature) if self.repairs else ()

    def line_temperatures(self) -> tuple[float, ...]:
        """One temperature per line repair at a line, lowest first (`[meta] temperature`)."""
        return temperatures(self.line_repairs, *self.temperature) if self.line_repairs else ()


def recorded_problem(log_dir: Path) -> str:
    """The problem the host's diagnosis chose, as it recorded it beside the instructions ("": none)."""
    path = log_dir / INSTRUCTIONS_JSON
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (FileNotFoundError, ValueError, UnicodeDecodeError):
        return ""
    problem = data.get("problem") if isinstance(data, dict) else None
    return problem[:PROBLEM_CHARS] if isinstance(problem, str) else ""


@contextmanager
def job_sandbox(
    ctx: JobContext, spec: ChannelSpec, image: str, spent: list[int] | None = None
) -> Iterator[tuple[Sandbox, Channel]]:
    """A fresh sandbox with the model channel of `spec` mounted; the channel closes with it (its tokens are
    added to `spent`)."""
    channel = ctx.channels.open_job(spec.job, ctx.node_id, spec.role, spec.tokens)
    try:
        with ctx.sandboxes(image, spec.job, gateway_socket=channel.socket_path) as box:
            yield box, channel
    finally:
        report = ctx.channels.close_job(spec.job)
        if spent is not None:
            spent.append(report.usage.prompt_tokens + report.usage.completion_tokens)


def candidate_channels(job: str, number: int, tokens: int) -> tuple[ChannelSpec, ChannelSpec]:
    """Candidate `number`'s modify and validation channels (the first keeps the names of one candidate)."""
    suffix = "" if number == 1 else f"-{number}"
    return ChannelSpec(f"{job}-modify{suffix}", "modify", tokens), ChannelSpec(
        f"{job}-validate{suffix}", "solve", tokens
    )


@dataclass(frozen=True)
class Plan:
    """What every candidate of one expansion is checked against."""

    settings: ExpandSettings
    diagnose: bool
    replays: tuple[Replay, ...]
    solve: EvalSettings
    rerun: Rerun


@dataclass(frozen=True)
class _Made:
    """A candidate as made (by the model's improve run or a template) and checked up to the gate."""

    child: Modification
    record: Candidate
    log_dir: Path


@dataclass(frozen=True)
class _Lost:
    """A candidate that was never made: its record (stage `sandbox`) and the failure."""

    record: Candidate
    error: SandboxError


Maker = Callable[[int, Path, Path, list[int]], tuple[Modification, Candidate]]
"""Makes candidate `number` at `dest` (its logs in `log_dir`, its tokens added to `spent`): the code and
its record so far."""
Heard = Callable[[Modification, str | None, str | None], None]
"""Told how a made candidate ended (its code, the stage that refused it and why; None: none did)."""


def _ranked(number: int, temperature: float, source: str, said: str, location: Location) -> Candidate:
    """The record, before its checks, of a model candidate made at a ranked location."""
    return Candidate(
        number,
        temperature,
        False,
        None,
        None,
        "",
        0,
        0.0,
        source=source,
        template=said,
        location=f"{location.path}:{location.line}",
    )


def _ignore(child: Modification, stage: str | None, reason: str | None) -> None:
    """A maker that learns nothing from how its candidate ended (a template, an improve run)."""


def _told(conversation: Conversation, replies: list[str]) -> Heard:
    """What a repair's maker hears: a refusal of its candidate joins `conversation`, with the last reply."""

    def heard(child: Modification, stage: str | None, reason: str | None) -> None:
        if stage is not None:
            conversation.refused(replies[-1], child, stage, reason or "")

    return heard


def _makers(
    ctx: JobContext,
    instructions: str,
    plan: Plan,
    templates: list[Generated],
    repairs: list[Conversation],
    lines: list[Conversation],
) -> list[tuple[Maker, Heard]]:
    """The templates' candidates (no model) first, then the line repairs' (each line's samples in turn, each
    told how the ones before ended; one that makes a change made before is made as no change), then the
    repairs' (each location's attempts in turn, told the same), then the improve step's, one per
    temperature."""

    def template(generated: Generated) -> Maker:
        def make(number: int, dest: Path, log_dir: Path, spent: list[int]) -> tuple[Modification, Candidate]:
            edit = generated.edit
            child = edited_child(
                ctx.code,
                {generated.path: edit.source},
                dest,
                log_dir,
                f"template {edit.template} at {generated.path}:{edit.line}: {edit.change}",
            )
            where = f"{generated.path}:{generated.location.line}"
            return child, Candidate(
                number,
                None,
                False,
                None,
                None,
                "",
                0,
                0.0,
                source="screen" if generated.screened else "template",
                template=f"{edit.template}: {edit.change} (line {edit.line})",
                location=where,
            )

        return make

    problem = recorded_problem(ctx.log_dir) if repairs or lines else ""

    def repair(
        conversation: Conversation, attempt: int, temperature: float, channel: int
    ) -> tuple[Maker, Heard]:
        replies: list[str] = []

        def make(number: int, dest: Path, log_dir: Path, spent: list[int]) -> tuple[Modification, Candidate]:
            spec = repair_channel(ctx.job, channel, plan.settings.job_tokens)
            child, reply = make_repair(ctx, conversation, spec, temperature, problem, dest, log_dir, spent)
            replies.append(reply)
            said = f"attempt {attempt} of {plan.settings.repairs}: {child.summary}"
            return child, _ranked(number, temperature, "repair", said, conversation.location)

        return make, _told(conversation, replies)

    made_before: set[str] = set()

    def line(
        conversation: Conversation, sample: int, temperature: float, channel: int
    ) -> tuple[Maker, Heard]:
        replies: list[str] = []

        def make(number: int, dest: Path, log_dir: Path, spent: list[int]) -> tuple[Modification, Candidate]:
            spec = line_channel(ctx.job, channel, plan.settings.job_tokens)
            child, reply = make_line_repair(
                ctx, conversation, spec, temperature, problem, dest, log_dir, spent
            )
            replies.append(reply)
            if child.diff.strip() and child.diff in made_before:
                child = edited_child(ctx.code, {}, dest, log_dir, f"{child.summary}: a change made before")
            made_before.add(child.diff)
            said = f"sample {sample} of {plan.settings.line_repairs}: {child.summary}"
            return child, _ranked(number, temperature, "line", said, conversation.location)

        return make, _told(conversation, replies)

    def model(temperature: float) -> Maker:
        def make(number: int, dest: Path, log_dir: Path, spent: list[int]) -> tuple[Modification, Candidate]:
            spec, _ = candidate_channels(ctx.job, number, plan.settings.job_tokens)
            child = _modify(ctx, spec, instructions, plan.settings, dest, log_dir, temperature, spent)
            return child, Candidate(number, temperature, False, None, None, "", 0, 0.0)

        return make

    return [
        *((template(t), _ignore) for t in templates),
        *(
            line(conversation, sample, temperature, at * plan.settings.line_repairs + sample)
            for at, conversation in enumerate(lines)
            for sample, temperature in enumerate(plan.settings.line_temperatures(), 1)
        ),
        *(
            repair(conversation, attempt, temperature, at * plan.settings.repairs + attempt)
            for at, conversation in enumerate(repairs)
            for attempt, temperature in enumerate(plan.settings.repair_temperatures(), 1)
        ),
        *((model(t), _ignore) for t in plan.settings.temperatures()),
    ]


def best_candidate(
    ctx: JobContext,
    instructions: str,
    plan: Plan,
    templates: list[Generated],
    repairs: list[Conversation] | None = None,
    lines: list[Conversation] | None = None,
) -> tuple[Modification, Verdict]:
    """Make and check the candidates one by one; the child and its verdict (with none passing: the candidate
    that got furthest, refused). Without a live re-run the first that passes the gate is the child; with one,
    the survivors are gated in order of the failures they fixed. The child's code ends at `log_dir /
    "child"`."""
    settings = plan.settings
    makers = _makers(ctx, instructions, plan, templates, repairs or [], lines or [])
    several = len(makers) > 1
    made: list[_Made] = []
    lost: list[_Lost] = []  # made nothing: the sandbox of its improve run failed
    try:
        for number, (make, heard) in enumerate(makers, 1):
            one = _one(ctx, plan, number, make, heard, several)
            if isinstance(one, _Lost):
                lost.append(one)
                continue
            made.append(one)
            if one.record.stage is None and (not plan.rerun or one.record.fixed == len(plan.rerun.failed)):
                break  # the child (no re-run), or a survivor no other candidate can beat
    except SandboxesClosed:  # the run is stopping: what was made so far stays on record
        if several:
            write_candidates(ctx.log_dir, _records(made, lost))
        raise
    if not made and lost:  # no candidate was made at all: the expansion's sandbox failure
        if several:
            write_candidates(ctx.log_dir, _records(made, lost))
        raise lost[-1].error
    if plan.rerun:
        _gate_survivors(ctx, made, plan)
    order = VALIDATED if settings.validating else STAGES
    chosen = [n for n, m in enumerate(made) if m.record.chosen]
    pick = chosen[0] if chosen else furthest([m.record.stage for m in made], order)
    child = made[pick].child
    verdict = Verdict(True) if chosen else Verdict(False, made[pick].record.reason)
    if several:
        write_candidates(ctx.log_dir, _records(made, lost))
        _keep_only(ctx.log_dir, child.code_dir, [m.child.code_dir for m in made])
        _patch_of_child(ctx.log_dir, made[pick].log_dir)
        child = replace(child, code_dir=ctx.log_dir / "child")
        if not verdict.valid:
            verdict = Verdict(
                False,
                f"{verdict.reason} (the furthest of {len(made)} candidates, "
                f"candidate {pick + 1}; every verdict is in the job's candidates.jsonl)",
            )
    return child, verdict


def _one(ctx: JobContext, plan: Plan, number: int, make: Maker, heard: Heard, several: bool) -> _Made | _Lost:
    """Candidate `number` made and checked up to the gate (without a live re-run, through it). A failure of
    one of its sandboxes is its own record, stage `sandbox`; the run's sandboxes closing is not (it raises:
    the run is stopping)."""
    settings = plan.settings
    started = time.monotonic()
    log_dir = ctx.log_dir / f"candidate-{number}" if number > 1 else ctx.log_dir
    log_dir.mkdir(parents=True, exist_ok=True)
    spent: list[int] = []
    made = _contained(lambda: make(number, log_dir / ("candidate" if several else "child"), log_dir, spent))
    if isinstance(made, SandboxError):
        seconds = round(time.monotonic() - started, 1)
        return _Lost(
            Candidate(number, None, False, SANDBOX, _failed(made), "", 0, seconds, tokens=sum(spent)), made
        )
    child, record = made
    filtered = cheap_filters(ctx.code, child.code_dir, child.diff, require_code=settings.require_code)

    def checks() -> tuple[str | None, str | None, int | None]:
        screened = record.source == "screen"
        stage, reason, fixed = _checked(ctx, child, filtered, plan, log_dir, number, spent, screened)
        if stage is None and not plan.rerun:
            gate = _validate(ctx, number, child, settings, log_dir, diagnose=plan.diagnose, spent=spent)
            stage, reason = (None, None) if gate.valid else (gate.check or "applies", gate.reason)
        return stage, reason, fixed

    checked = _contained(checks)
    stage, reason, fixed = (SANDBOX, _failed(checked), None) if isinstance(checked, SandboxError) else checked
    if stage != SANDBOX:  # a sandbox's failure is not the candidate's to learn from
        heard(child, stage, reason)
    record = replace(
        record,
        chosen=stage is None and not plan.rerun,
        stage=stage,
        reason=reason,
        kind=filtered.kind.value,
        changed_lines=changed_lines(child.diff),
        seconds=round(time.monotonic() - started, 1),
        tokens=sum(spent),
        fixed=fixed,
    )
    return _Made(child, record, log_dir)


def _checked(
    ctx: JobContext,
    child: Modification,
    filtered: Filtered,
    plan: Plan,
    log_dir: Path,
    number: int,
    spent: list[int],
    screened: bool = False,
) -> tuple[str | None, str | None, int | None]:
    """The candidate through the stages before the gate, cheapest first (`filtered`: its cheap filters'
    verdict): the stage that refused it and why (None: none did), and how many re-run failures it fixed
    (None: not re-run). `screened`: the screen kept it, so it has shown a fix the re-run need not repeat."""
    if filtered.stage is not None:
        return filtered.stage, filtered.reason, None
    if plan.settings.validating:
        suffix = "" if number == 1 else f"-{number}"
        with ctx.sandboxes(plan.settings.image, f"{ctx.job}-tests{suffix}") as box:
            tested = own_tests(
                box, child.code_dir, log_dir, timeout_s=ctx.agent_timeout(runs=VALIDATION_RUNS)
            )
        if not tested.valid:
            return tested.check, tested.reason, None
    if plan.replays:
        reason = acts_as_parent(
            ctx,
            child.code_dir,
            plan.replays,
            plan.solve,
            log_dir,
            limit=plan.settings.replays,
            shown_fixed=screened,
        )
        if reason is not None:
            return BEHAVIOUR, reason, None
    if plan.rerun:
        rerun = rerun_candidate(ctx, child.code_dir, plan.rerun, plan.solve, log_dir, shown_fixed=screened)
        spent.append(rerun.tokens)
        return None if rerun.reason is None else RERUN, rerun.reason, rerun.fixed
    return None, None, None


def _gate_survivors(ctx: JobContext, made: list[_Made], plan: Plan) -> None:
    """Gate the re-run's survivors, most fixes first (the earlier on a tie), until one passes: it is the
    child. The gate's verdict and cost go into each gated candidate's record (in place in `made`)."""
    survivors = sorted(
        (n for n, m in enumerate(made) if m.record.stage is None),
        key=lambda n: (-(made[n].record.fixed or 0), n),
    )
    for n in survivors:
        started = time.monotonic()
        spent: list[int] = []
        entry = made[n]
        gated = _contained(
            partial(
                _validate,
                ctx,
                entry.record.number,
                entry.child,
                plan.settings,
                entry.log_dir,
                diagnose=plan.diagnose,
                spent=spent,
            )
        )
        gate = Verdict(False, _failed(gated), SANDBOX) if isinstance(gated, SandboxError) else gated
        record = replace(
            entry.record,
            chosen=gate.valid,
            stage=None if gate.valid else gate.check or "applies",
            reason=gate.reason,
            tokens=entry.record.tokens + sum(spent),
            seconds=round(entry.record.seconds + time.monotonic() - started, 1),
        )
        made[n] = replace(entry, record=record)
        if gate.valid:
            return


def _records(made: list[_Made], lost: list[_Lost]) -> list[Candidate]:
    """Every candidate's record, in the order they were made."""
    return sorted([m.record for m in made] + [m.record for m in lost], key=lambda c: c.number)


def _contained(step: Callable[[], T]) -> T | SandboxError:
    """`step`'s result, or the failure of a sandbox it used: a candidate's own, recorded as its stage
    `sandbox`. The run's sandboxes closing is not one candidate's failure: it raises (the run is
    stopping)."""
    try:
        return step()
    except SandboxesClosed:
        raise
    except SandboxError as exc:
        return exc


def _failed(exc: SandboxError) -> str:
    """Why a candidate whose sandbox failed got nowhere, in the words the expansion's own failure uses."""
    if isinstance(exc, CopyRefused):  # the child's own doing: a link out of its tree, a special file, the cap
        return f"the child's code cannot be copied out: {exc}"
    return f"sandbox failed: {exc}"


def _keep_only(log_dir: Path, kept: Path, every: list[Path]) -> None:
    """The chosen candidate's code becomes the job's child; the others' code goes (their patches stay)."""
    shutil.rmtree(log_dir / "child", ignore_errors=True)
    shutil.move(kept, log_dir / "child")
    for code in every:
        if code != kept:
            shutil.rmtree(code, ignore_errors=True)


def _patch_of_child(log_dir: Path, chosen: Path) -> None:
    """The job's `child.patch` is the child's: where the chosen candidate is not the first (whose logs are the
    job's own), the first's patch is kept as `candidate-1.patch` and the chosen one's copied over it."""
    if chosen == log_dir or not (chosen / "child.patch").is_file():
        return
    if (log_dir / "child.patch").is_file():
        shutil.copyfile(log_dir / "child.patch", log_dir / "candidate-1.patch")
    shutil.copyfile(chosen / "child.patch", log_dir / "child.patch")


def _modify(
    ctx: JobContext,
    spec: ChannelSpec,
    instructions: str,
    settings: ExpandSettings,
    dest: Path,
    log_dir: Path,
    temperature: float,
    spent: list[int],
) -> Modification:
    with job_sandbox(ctx, spec, settings.image, spent) as (box, channel):
        env = {**channel.sandbox_env(), "EVOLVE_TEMPERATURE": f"{temperature:g}"}
        data = ctx.log_dir / INSTRUCTIONS_JSON
        return self_modify(
            box,
            ctx.code,
            instructions,
            dest,
            log_dir,
            channel_env=env,
            data=data.read_text() if data.is_file() else "",
            budget_steps=settings.improve_steps,
            timeout_s=ctx.agent_timeout(),
        )


def _validate(
    ctx: JobContext,
    number: int,
    child: Modification,
    settings: ExpandSettings,
    log_dir: Path,
    *,
    diagnose: bool,
    spent: list[int],
) -> Verdict:
    _, spec = candidate_channels(ctx.job, number, settings.job_tokens)
    with job_sandbox(ctx, spec, settings.image, spent) as (box, channel):
        return validate_child(
            box,
            child.code_dir,
            child.diff,
            log_dir,
            channel_env=channel.sandbox_env(),
            served=lambda: ctx.channels.report(spec.job).requests,
            smoke_steps=settings.smoke_steps,
            timeout_s=ctx.agent_timeout(runs=VALIDATION_RUNS),
            diagnose=diagnose,
        )
