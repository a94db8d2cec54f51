"""The candidate children of an expansion and each one's filter verdict (`[meta] candidates`).

An expansion samples k candidates (k runs of the parent's `improve`); each goes through the cheap
filters and then the gate (evolve.meta.candidates), and the first that passes them all is the child.
The engine writes one line per candidate to the expansion job's log (`candidates.jsonl`), so `evolve show`
and the report can say what was tried and why each one was refused. Written by the engine, never by
agent code: the reasons are the filters' own words.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path

from evolve.archive.jobrows import made_node
from evolve.archive.records import JobKind
from evolve.archive.store import Run
from evolve.untrusted import Record, read_jsonl

RECORD = "candidates.jsonl"


@dataclass(frozen=True)
class Candidate:
    """One sampled candidate child and what became of it."""

    number: int
    """1..k, in sampling order."""
    temperature: float | None
    """The sampling temperature its improve run was asked to use (`EVOLVE_TEMPERATURE`); None for a
    template."""
    chosen: bool
    """It is the child (the first candidate that passed every filter; with a live re-run, the survivor that
    fixed most of the parent's failures and passed the gate)."""
    stage: str | None
    """The filter or gate check that refused it (`applies`, `compiles`, `differs`, `code edit`, then the
    gate's: `imports`, `own tests`, `solve`, ...); None when it passed all."""
    reason: str | None
    kind: str
    """Its edit kind against the parent (evolve.archive.edits)."""
    changed_lines: int
    """Lines added or removed by its diff."""
    seconds: float
    """Wall time of its making (an improve run) and its checks."""
    source: str = "model"
    """`model` (a run of the parent's improve), `template` (evolve.meta.templates), `screen` (a template edit
    that passed the agent's own tests in the spectra's screen, evolve.engine.screen), `repair` (the engine's
    model repair of the function around a ranked line) or `line` (its model sample of the ranked line itself;
    both evolve.engine.repair)."""
    template: str | None = None
    """The template that made it, and what it changed (`number: 64 -> 640`); for a repair, its attempt and
    what it rewrote; for a line repair, its sample and what it changed."""
    location: str | None = None
    """The ranked location (`path:line`) a template or repair was made at (None: an improve run's)."""
    tokens: int = 0
    """Model tokens it cost: its improve run, its live re-run and its gate."""
    fixed: int | None = None
    """Of the parent's failed search tasks re-run live, how many it passed (None: not re-run)."""

    @property
    def verdict(self) -> str:
        return (
            "child"
            if self.chosen
            else "passed"
            if self.stage is None
            else f"refused at {self.stage}: {self.reason}"
        )


def write_candidates(log_dir: Path, candidates: list[Candidate]) -> None:
    (log_dir / RECORD).write_text("".join(json.dumps(asdict(c)) + "\n" for c in candidates))


def read_candidates(log_dir: Path) -> list[Candidate]:
    """The job's records; none for a job that predates them or ran one candidate without a record. The file
    lies among the job's logs, beside agent-written ones: read as untrusted (evolve.untrusted), a line
    that is not a candidate's record is left out."""
    return [found for record in read_jsonl(log_dir / RECORD) if (found := _candidate(record)) is not None]


def _candidate(record: Record) -> Candidate | None:
    """The candidate a record holds; None when a field it must have is missing or of another type (a field
    a record of an older engine lacks takes its default)."""
    number = record.integer("number")
    chosen = record.flag("chosen")
    kind = record.optional_text("kind")
    lines = record.integer("changed_lines")
    seconds = record.number("seconds")
    if number is None or chosen is None or kind is None or lines is None or seconds is None:
        return None
    if record.value("temperature") is not None and record.number("temperature") is None:
        return None  # a temperature that is there must be a number (None: a template's candidate)
    return Candidate(
        number,
        record.number("temperature"),
        chosen,
        record.optional_text("stage"),
        record.optional_text("reason"),
        kind,
        lines,
        seconds,
        source=record.text("source", "model"),
        template=record.optional_text("template"),
        location=record.optional_text("location"),
        tokens=record.integer("tokens") or 0,
        fixed=record.integer("fixed"),
    )


def node_candidates(run: Run, node_id: str) -> list[Candidate]:
    """The candidates of the expansion that made `node_id` (its job's detail names the node)."""
    return candidates_of(run, [node_id]).get(node_id, [])


def candidates_of(run: Run, node_ids: list[str]) -> dict[str, list[Candidate]]:
    """The candidates of the expansions that made each of `node_ids` (the run's jobs read once); a node
    made without candidate records is left out."""
    wanted, made = set(node_ids), {}
    for job in run.jobs():
        child = made_node(job)
        if child in wanted:
            made[child] = job.id  # the last expansion naming the node made it
    # read only
    found = {node: read_candidates(run.path / "logs" / f"job-{job}") for node, job in made.items()}
    return {node: candidates for node, candidates in found.items() if candidates}


def render_candidates(candidates: list[Candidate]) -> list[str]:
    """One line per candidate, for `evolve show`."""
    return [
        f"  {c.number}. {_origin(c)}  {c.kind}, {c.changed_lines} lines, {c.seconds:.0f} s"
        f"{f', {c.tokens} tokens' if c.tokens else ''}{f', fixed {c.fixed}' if c.fixed is not None else ''}: "
        f"{c.verdict}"
        for c in candidates
    ]


def _origin(candidate: Candidate) -> str:
    """`t=0.20` (a model candidate), or `template number: 64 -> 640 at agent/x.py:12`."""
    if candidate.source in ("template", "screen"):
        screened = "screened " if candidate.source == "screen" else ""
        return f"{screened}template {candidate.template} at {candidate.location}"
    if candidate.source in ("repair", "line"):
        kind = "repair" if candidate.source == "repair" else "line repair"
        return f"{kind} t={candidate.temperature or 0:.2f} {candidate.template} (ranked {candidate.location})"
    return f"t={candidate.temperature:.2f}" if candidate.temperature is not None else "model"


def candidate_stages(run: Run) -> tuple[int, Counter[str]]:
    """Where every recorded candidate of the run ended: the expansions with candidate records, and per stage
    that refused candidates how many (`child` for the chosen ones); read from the jobs' logs."""
    expansions, stages = 0, Counter[str]()
    for job in run.jobs():
        if job.kind == JobKind.EXPAND and (found := read_candidates(run.path / "logs" / f"job-{job.id}")):
            expansions += 1
            stages.update("child" if c.chosen else c.stage or "passed" for c in found)
    return expansions, stages


def render_stages(expansions: int, stages: Counter[str]) -> str:
    """`31 in 11 expansions: 1 child; refused at applies 14, own tests 12, ...` (most first)."""
    refused = ", ".join(
        f"{stage} {count}" for stage, count in stages.most_common() if stage not in ("child", "passed")
    )
    children = stages["child"]
    return (
        f"{stages.total()} in {expansions} expansion{'s' * (expansions != 1)}: {children} "
        f"child{'ren' * (children != 1)}" + (f"; refused at {refused}" if refused else "")
    )
