"""The agent's own lines ranked by where its failing runs went: its recorded evaluations replayed under
coverage.

Each picked evaluation of a node (up to `FAILING` failed and `PASSING` passed search tasks) is re-run with
the node's own code, every model reply answered from that evaluation's recording (evolve.engine.behaviour's
replay: no model), and the agent's process traced by a bootstrap the engine runs in place of `python3 -m`
(evolve.engine.coverage_probe: the standard library's `sys.settrace`, nothing installed in the image). The
lines of the agent's files each run executed, labelled by the grader's outcome of that replay, are ranked
by the Ochiai formula (evolve.meta.spectra); what each command the agent ran printed is set against what
reached the model in the requests it sent, and said on the line that ran the command.

Apart from the replays, the agent's own tests (`tests/`, as the gate runs them) are run once with each
test's lines traced (evolve.engine.test_probe), each test a run: where the parent fails its own tests, the
lines only its failing tests ran rank first, and the failing tests, with how they failed, are the evidence.
Then, in the same sandbox, template edits at the lines the failing tests ran are screened against them
(`screen` edits at most; evolve.engine.screen): an edit that makes every own test pass heads the ranking
and is the expansion's first candidate.

A line every run ran, failing and passing alike, ranks nothing by spectra; where such a line stores a value
its function never reads (evolve.meta.dataflow: a dead store), the statement after it and the store are
ranked from the source, for either kind of run.

Cost: one solve sandbox and one grading sandbox per replayed evaluation, at most `FAILING + PASSING` of
them, and one sandbox for the own tests; no model tokens; the replies come at once, so a replay takes the
agent's own and its tools' time.

Trust: the coverage and tool outputs are written inside the agent's sandbox, where the agent's code runs;
the agent can write them as it likes. They may only RANK locations for the diagnosis to look at; they never
feed a score, a verdict or a budget. A run's label (failing or passing) is the engine's grader's outcome,
and a replay that asked the recording something new (the run left the recorded path) is not counted.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

import numpy as np
from pydantic import ValidationError

from evolve import syntax
from evolve.archive.store import Run
from evolve.archive.vocab import Outcome
from evolve.engine import coverage_probe, line_values, test_probe
from evolve.engine.behaviour import Replay, recorded_replays, replay_once
from evolve.engine.context import ChannelSpec, JobContext
from evolve.engine.evaluate import AgentProbe, EvalSettings
from evolve.engine.screen import Screen, screen
from evolve.llm.exchanges import Exchange
from evolve.meta.agentmap import is_test
from evolve.meta.dataflow import dead_store_locations, dead_stores
from evolve.meta.discarded import discarded, discarded_locations
from evolve.meta.fields import constant_field_locations, constant_fields
from evolve.meta.formats import dropped, dropped_locations
from evolve.meta.locate import merge
from evolve.meta.locations import Location
from evolve.meta.nones import none_locations
from evolve.meta.pipes import pipe_locations
from evolve.meta.procedure import AGENT, output_tail
from evolve.meta.reach import unreachable, unreachable_locations
from evolve.meta.similar import deviant_locations, deviants
from evolve.meta.spectra import (
    LINES_BYTES,
    TESTS_BYTES,
    TOOLS_BYTES,
    VALUES_BYTES,
    Line,
    OwnTest,
    Spectrum,
    ToolOutput,
    Values,
    masking,
    rank,
    rank_own_tests,
    read_lines,
    read_own_tests,
    read_tools,
    read_values,
    with_own_tests,
    with_values,
)
from evolve.meta.swapped import swapped, swapped_locations
from evolve.sandbox.types import SandboxError
from evolve.tasks.types import Task
from evolve.untrusted import read_text

FAILING = 4
"""Failed search evaluations replayed at most."""
PASSING = 4
"""Passed search evaluations replayed at most."""
LIMIT = 20
"""Ranked lines returned at most (lines with tool-output evidence come beyond it)."""
OUT = "/work/.evolve-spectra"
"""Where the probe writes in the sandbox: outside the agent's root and the task's repository."""
LINES = "coverage-lines"
"""The probe's `lines` file, as kept in each replay's log directory."""
TOOLS = "coverage-tools"
"""The probe's `tools` file, as kept in each replay's log directory."""
VALUES = "coverage-values"
"""The probe's `values` file, as kept in each replay's log directory."""
TESTS = "test-spectra"
"""The own-test probe's `tests` file, as kept in the job's log directory."""
SOURCE_BYTES = 1 << 20
"""An agent file larger than this is not counted among its lines."""


def spectra_replays(
    run: Run, node_id: str, tasks: Mapping[str, Task], *, failing: int = FAILING, passing: int = PASSING
) -> tuple[Replay, ...]:
    """The node's recorded search evaluations to replay: up to `failing` failed ones, then up to `passing`
    passed ones (distinct tasks, recording order), each with its exchanges and change recorded."""
    return recorded_replays(run, node_id, tasks, failing, Outcome.FAIL) + recorded_replays(
        run, node_id, tasks, passing, Outcome.PASS
    )


def spectra_locations(
    ctx: JobContext, replays: Sequence[Replay], settings: EvalSettings, *, limit: int = LIMIT
) -> tuple[list[Location], dict[str, frozenset[Line]]]:
    """The lines of `ctx.code` (the node's agent) ranked by the Ochiai formula over `replays` re-run under
    coverage, most suspicious first, each with its evidence (empty when no failing replay was traced), and
    the lines each traced failing replay ran, by task (they choose the replays a candidate's behaviour is
    checked on: evolve.engine.behaviour).

    Costs one solve and one grading sandbox per replay (`spectra_replays` bounds them); logs go to
    `ctx.log_dir / "spectra-N"`. `settings` are the run's evaluation settings, as the recordings had them."""
    accepts = agent_lines(ctx.code)
    spectra: list[Spectrum] = []
    tools: list[ToolOutput] = []
    values: dict[Line, tuple[str, Values]] = {}  # the first failing replay's, with its task
    read: list[tuple[dict[Line, Values], str]] = []  # each failing replay's, with what it sent the model
    traced: dict[str, frozenset[Line]] = {}
    for number, recorded in enumerate(replays, 1):
        logs = ctx.log_dir / f"spectra-{number}"
        result, asked = replay_once(ctx, ctx.code, recorded, settings, logs, probe())
        counts = Outcome(result.outcome).counts
        if counts is None or asked.replay_misses:
            continue
        covered = _read(logs / LINES, LINES_BYTES)
        lines = None if covered is None else read_lines(covered, accepts)
        if lines is None:  # the probe left no readable coverage: the run says nothing of the lines
            continue
        failed = not counts
        spectra.append(Spectrum(failed, lines))
        ran = _read(logs / TOOLS, TOOLS_BYTES) or b""
        tools.extend(read_tools(ran, accepts, sent_text(recorded.exchanges), failed=failed))
        if failed:
            traced.setdefault(recorded.task.id, lines)
            held = read_values(_read(logs / VALUES, VALUES_BYTES) or b"", lines)
            read.append((held, sent_text(recorded.exchanges)))
            for line, pairs in held.items():
                values.setdefault(line, (f"the failing replay of {recorded.task.id}", pairs))
    ran_failing = frozenset(line for spectrum in spectra if spectrum.failed for line in spectrum.lines)
    dropped = static_lines(ctx.code, ran_failing, tools, read)
    ranked = merge([rank(spectra, tools, limit), dropped], limit + len(dropped))
    return [with_values(at, *values.get((at.path, at.line), ("", ()))) for at in ranked], traced


def own_test_locations(
    ctx: JobContext, image: str, *, limit: int = LIMIT, edits: int = 0, seed: Sequence[int] = (0,)
) -> tuple[list[Location], list[OwnTest], Screen]:
    """The lines of `ctx.code` ranked by the Ochiai formula over its own tests (each test a run, traced by
    evolve.engine.test_probe in a sandbox of `image`), the tests as they ran, and the screen of up to `edits`
    template edits against the failing ones (its order drawn from `seed`; its kept edits' lines first); no
    lines when none failed or the probe left no readable record. The probe's output and record and the
    screen's verdicts go to `ctx.log_dir`."""
    with ctx.sandboxes(image, f"{ctx.job}-test-spectra") as box:
        box.put_dir(ctx.code, AGENT)
        ran = box.exec(["python3", "-c", bootstrap(test_probe), OUT], cwd=AGENT, timeout=ctx.agent_timeout())
        (ctx.log_dir / f"{TESTS}.log").write_text(output_tail(ran.stdout + ran.stderr))
        try:
            data = box.read_file(f"{OUT}/tests")[: TESTS_BYTES + 1]  # over its bound reads as none
        except (FileNotFoundError, IsADirectoryError):
            return [], [], Screen()  # the tests wrote none (no tests, or they ended the process first)
        accepts = agent_lines(ctx.code)
        runs = read_own_tests(data, lambda line: accepts(line) and not line[0].startswith("tests/"))
        screened = screen(
            box, ctx.code, runs, edits=edits, rng=np.random.default_rng(list(seed)), log_dir=ctx.log_dir
        )
    (ctx.log_dir / TESTS).write_bytes(data)
    failed = frozenset(line for run in runs if run.failed for line in run.lines)
    dropped = [with_own_tests(location, runs) for location in static_lines(ctx.code, failed)]
    kept = [generated.location for generated in screened.kept]
    ranked = merge([kept, rank_own_tests(runs, limit), dropped], limit + len(kept) + len(dropped))
    return ranked, runs, screened


@dataclass(frozen=True)
class SpectraResult:
    """What the spectra found and cost: the ranked lines, the replays run, their sandboxes and seconds, and
    the agent's own tests as they ran."""

    locations: tuple[Location, ...]
    replays: int
    sandboxes: int
    """Started at most: a solve and a grading sandbox per replay, one for the own tests."""
    seconds: float
    error: str = ""
    """Why the spectra stopped (a sandbox failure: the own tests' lines, if found before it, are kept); ""
    when they ran through."""
    tests: int = 0
    """The agent's own tests that ran under the probe."""
    failing_tests: tuple[str, ...] = ()
    """Those that failed, by id."""
    screen: Screen = field(default_factory=Screen)
    """The template edits screened against the failing own tests, and those kept (evolve.engine.screen)."""
    ran: dict[str, frozenset[Line]] = field(default_factory=dict)
    """The agent's lines each traced failing replay ran, by task (written in the agent's sandbox: they only
    choose which failures a candidate's behaviour is replayed on, evolve.engine.behaviour)."""

    def to_json(self) -> dict:
        return {
            "replays": self.replays,
            "sandboxes": self.sandboxes,
            "seconds": round(self.seconds, 3),
            "error": self.error,
            "tests": self.tests,
            "failing_tests": list(self.failing_tests),
            "locations": [location.to_json() for location in self.locations],
            "screen": self.screen.to_json(),
            "traced": sorted(self.ran),
        }


@dataclass(frozen=True)
class Spectra:
    """The spectra as a job's sandbox work (evolve.engine.context.Work): the expansion's worker runs it at its
    place (here or on a cluster node) before the host's diagnosis, which merges the ranking
    (evolve.meta.locate). No model channel: every reply comes from the replayed recording."""

    replays: tuple[Replay, ...]
    settings: EvalSettings
    limit: int = LIMIT
    tests_image: str | None = None
    """The image the agent's own tests run in under the probe (None: they are not run)."""
    screen: int = 0
    """Template edits screened against the failing own tests at most (`[meta] screen`)."""
    seed: tuple[int, ...] = (0,)
    """Seeds the screen's order of edits (the run seed and the search decision)."""

    def channels(self, job: str) -> tuple[ChannelSpec, ...]:
        return ()

    def __call__(self, ctx: JobContext) -> SpectraResult:
        started = time.monotonic()
        error = ""
        locations: list[Location] = []
        runs: list[OwnTest] = []
        screened = Screen()
        traced: dict[str, frozenset[Line]] = {}
        try:
            if self.tests_image is not None:
                locations, runs, screened = own_test_locations(
                    ctx, self.tests_image, limit=self.limit, edits=self.screen, seed=self.seed
                )
            if self.replays:
                replayed, traced = spectra_locations(ctx, self.replays, self.settings, limit=self.limit)
                locations = merge([locations, replayed], limit=2 * self.limit)
        except SandboxError as exc:  # only a ranking: the diagnosis goes on with its other sources
            error = f"sandbox failed: {exc}"
        ran = sum(1 for path in ctx.log_dir.glob("spectra-*") if path.is_dir())
        return SpectraResult(
            tuple(locations),
            ran,
            2 * ran + (self.tests_image is not None),
            time.monotonic() - started,
            error,
            tests=len(runs),
            failing_tests=tuple(run.test for run in runs if run.failed),
            screen=screened,
            ran=traced,
        )


def probe() -> AgentProbe:
    """The coverage bootstrap as the evaluation runs it: `python3 -c <probe> OUT agent solve ...`."""
    collect = ((f"{OUT}/lines", LINES), (f"{OUT}/tools", TOOLS), (f"{OUT}/values", VALUES))
    return AgentProbe(("python3", "-c", bootstrap(coverage_probe), OUT), collect)


def bootstrap(module: ModuleType) -> str:
    """The text a probe runs as in the agent's sandbox: evolve.engine.line_values's, then the probe's own
    (where evolve is not installed; imported, a probe takes line_values from its module)."""
    return "\n\n".join(Path(m.__file__ or "").read_text(encoding="utf-8") for m in (line_values, module))


def static_lines(
    code: Path,
    ran: frozenset[Line],
    tools: Sequence[ToolOutput] = (),
    values: Sequence[tuple[Mapping[Line, Values], str]] = (),
) -> list[Location]:
    """Lines the agent's Python files under `code` make suspicious by themselves, where a failing run ran
    them (`ran`): the dead stores and the statements after them (evolve.meta.dataflow), and the lines that
    bind the local a field read but only ever set to a constant was likely meant to keep (evolve.meta.fields),
    and the expressions that their twins elsewhere all contradict in one part (evolve.meta.similar's
    deviants), and the strings that a format call a failing run ran passes a keyword they have no field for
    (evolve.meta.formats), and the statements that cut off the statements after them (evolve.meta.reach),
    and the statements that drop the new value their call computed (evolve.meta.discarded), and the calls
    that pass two arguments named as each other's parameters (evolve.meta.swapped); none where no failing
    run ran one. With the commands the failing runs ran (`tools`), also the literals
    that wrote a pipe into a pipeline that hid a failure (evolve.meta.pipes); with what each failing run read
    and sent the model (`values`), the f-strings that sent it a value read as None (evolve.meta.nones)."""
    # the agent's own files: no link followed, none over SOURCE_BYTES
    sources = {path: read_text(code / path, SOURCE_BYTES) for path in sorted(_agent_files(code))}
    trees = {path: tree for path, text in sources.items() if (tree := syntax.parsed(text)) is not None}
    ran_files = sorted({path for path, _ in ran} & set(sources))
    stores = [store for path in ran_files for store in dead_stores(path, sources[path])]
    fields = [
        field
        for path in ran_files
        if path in trees
        for field in constant_fields(path, trees[path], [t for p, t in trees.items() if p != path])
    ]
    own = {path: tree for path, tree in trees.items() if not is_test(path.split("/"))}
    return (
        dead_store_locations(stores, ran)
        + constant_field_locations(fields, ran)
        + pipe_locations(own, masking(tools))
        + deviant_locations(deviants(own), ran)
        + dropped_locations(dropped(own), ran)
        + unreachable_locations([item for path, tree in own.items() for item in unreachable(path, tree)], ran)
        + none_locations({path: sources[path] for path in own}, values)
        + discarded_locations([item for path, tree in own.items() for item in discarded(path, tree)], ran)
        + swapped_locations(
            [item for path, tree in own.items() for item in swapped(path, tree, list(own.values()))], ran
        )
    )


def agent_lines(code: Path) -> Callable[[Line], bool]:
    """Accepts a (path, line) that is a line of one of the agent's Python files under `code` (no link
    followed, none over `SOURCE_BYTES`)."""
    counts = _agent_files(code)

    def accepts(line: Line) -> bool:
        return 1 <= line[1] <= counts.get(line[0], 0)

    return accepts


def _agent_files(code: Path) -> dict[str, int]:
    """The agent's Python files under `code` (no link followed, none over `SOURCE_BYTES`), by path relative
    to it, with their line counts."""
    counts: dict[str, int] = {}
    for directory, _, files in os.walk(code):
        for name in files:
            path = Path(directory) / name
            if name.endswith(".py") and not path.is_symlink() and path.stat().st_size <= SOURCE_BYTES:
                counts[path.relative_to(code).as_posix()] = len(path.read_bytes().splitlines())
    return counts


def sent_text(exchanges: str) -> str:
    """The text the agent sent the model in a recording (JSONL exchanges): each distinct content of its
    requests' messages other than the model's own (assistant) ones, one after another."""
    contents: dict[str, None] = {}
    for row in exchanges.splitlines():
        if not row.strip():
            continue
        try:
            exchange = Exchange.model_validate_json(row)
        except ValidationError:
            # the engine's recording, but of a request the agent wrote: a row it cannot read is left out
            continue
        for message in exchange.request.messages:
            if message.role != "assistant" and message.content:
                contents[message.content] = None
    return "\n".join(contents)


def _read(path: Path, limit: int) -> bytes | None:
    """Up to `limit + 1` bytes of a file the probe left (so a larger one reads as over its bound); None if
    none."""
    if not path.is_file():
        return None
    with path.open("rb") as handle:
        return handle.read(limit + 1)
