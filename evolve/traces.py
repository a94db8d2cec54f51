"""`evolve export-traces`: a run's model exchanges as a fine-tuning data set (docs/tracking.md).

Each record is one exchange the gateway recorded (`exchanges/job-<id>[-<step>[-<n>]].jsonl`): the
request's messages with the model's reply appended, as the `messages` column TRL's SFT trainer and
OpenAI fine-tuning read, and the labels a recipe selects on: the exchange's `role` (solve, diagnose,
modify), its job's node, task, split and outcome, and for an expansion's exchanges the child it led to,
whether that child was valid and whether it beat its parent (its own dev pass rate above its parent's,
both evaluated). Held-out tasks are left out unless asked for: a model is never trained on the test set.
"""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from evolve.archive.candidates import read_candidates
from evolve.archive.jobrows import made_node
from evolve.archive.records import Evaluation, Job
from evolve.archive.store import Run
from evolve.archive.tree import CladeTree
from evolve.archive.vocab import JobKind, JobState, Outcome, Split
from evolve.errors import EvolveError
from evolve.llm.exchanges import Exchange, read_exchanges
from evolve.llm.types import message_to_openai

CHANNEL = re.compile(r"^job-(?P<job>\d+)(?:-(?P<step>[a-z]+)(?:-(?P<candidate>\d+))?)?\.jsonl$")
"""An exchange file's name: the engine's job, then an expansion's step (`diagnose`, `modify`, `validate`)
and its candidate (the first candidate's files carry no number)."""


@dataclass(frozen=True)
class TraceFilter:
    """Which exchanges to keep: with neither recipe flag, all (held-out ones only with `include_heldout`);
    with one or both, those either flag keeps."""

    passing_solves: bool = False
    """The solve exchanges of evaluations that passed."""
    improving_expansions: bool = False
    """The diagnose and modify exchanges of expansions whose child was valid and beat its parent (of the
    candidate that became the child, where the job recorded its candidates)."""
    include_heldout: bool = False

    def keeps(self, record: dict[str, Any]) -> bool:
        if record["split"] == Split.HELDOUT and not self.include_heldout:
            return False
        if not (self.passing_solves or self.improving_expansions):
            return True
        passing = (
            self.passing_solves
            and record["role"] == "solve"
            and record["job_kind"] == JobKind.EVALUATE
            and record["outcome"] == Outcome.PASS
        )
        improving = (
            self.improving_expansions
            and record["job_kind"] == JobKind.EXPAND
            and record["role"] in ("diagnose", "modify")
            and bool(record["child_better"])
            and record["candidate_chosen"] is not False
        )
        return passing or improving


@dataclass(frozen=True)
class TraceExport:
    """What an export wrote."""

    path: Path
    records: int
    roles: dict[str, int]
    heldout_left_out: int

    def line(self) -> str:
        roles = ", ".join(f"{count} {role}" for role, count in sorted(self.roles.items())) or "none"
        left = (
            f"; {self.heldout_left_out} held-out exchanges left out (--include-heldout)"
            if self.heldout_left_out
            else ""
        )
        noun = "exchange" if self.records == 1 else "exchanges"
        return f"wrote {self.records} {noun} ({roles}) to {self.path}{left}"


def trace_records(run: Run) -> Iterator[dict[str, Any]]:
    """Every recorded exchange of `run` as a labelled record, in job order (then file, then sequence)."""
    jobs = {job.id: job for job in run.jobs()}
    evaluations = _evaluations_by_job(jobs.values(), run.evaluations())
    tree = run.tree(with_tasks=False)
    nodes = {node.id: node for node in run.nodes()}
    for path in sorted((run.path / "exchanges").glob("job-*.jsonl"), key=_job_order):
        match = CHANNEL.match(path.name)
        job = jobs.get(int(match["job"])) if match else None
        if match is None or job is None:
            continue  # not an exchange file, or one of a job the run does not have (a lineage's bundle)
        labels = _job_labels(run, job, evaluations.get(job.id), tree, nodes, match)
        for exchange in read_exchanges(path):
            yield {
                "messages": _messages(exchange),
                "role": exchange.role,
                **labels,
                "seq": exchange.seq,
                "model": exchange.response.model,
            }


def export_traces(
    run: Run, dest: Path, *, keep: TraceFilter = TraceFilter(), fmt: Literal["jsonl", "hf"] = "jsonl"
) -> TraceExport:
    """Write the kept records to `dest`: a JSONL file, or a Hugging Face `datasets` directory (`hf`)."""
    kept: list[dict[str, Any]] = []
    heldout = 0
    for record in trace_records(run):
        if record["split"] == Split.HELDOUT and not keep.include_heldout:
            heldout += 1
        elif keep.keeps(record):
            kept.append(record)
    dest.parent.mkdir(parents=True, exist_ok=True)
    if fmt == "hf":
        try:
            import datasets
        except ImportError:
            raise EvolveError(
                "--format hf needs the `datasets` package (pip install 'evolve[tracking]')"
            ) from None
        datasets.Dataset.from_list(kept).save_to_disk(str(dest))
    else:
        with dest.open("w", encoding="utf-8") as out:
            for record in kept:
                out.write(json.dumps(record, ensure_ascii=False) + "\n")
    return TraceExport(dest, len(kept), dict(Counter(record["role"] for record in kept)), heldout)


def _job_order(path: Path) -> tuple[int, str]:
    match = CHANNEL.match(path.name)
    return (int(match["job"]) if match else -1, path.name)


def _messages(exchange: Exchange) -> list[dict[str, Any]]:
    """The conversation the model saw and its answer, in OpenAI's chat form."""
    return [message_to_openai(message) for message in (*exchange.request.messages, exchange.response.message)]


def _evaluations_by_job(jobs: Iterable[Job], evaluations: Iterable[Evaluation]) -> dict[int, Evaluation]:
    """Each evaluation by the job that recorded it. The archive finishes an evaluation job and inserts its
    row in one transaction, so per (node, task) the finished evaluation jobs and the rows pair up in order;
    this holds for a run imported from a bundle without logs too (its rows keep no log directory)."""
    finished: dict[tuple[str, str | None], list[int]] = defaultdict(list)
    for job in sorted(jobs, key=lambda job: job.id):
        if job.kind == JobKind.EVALUATE and job.state == JobState.FINISHED:
            finished[(job.node, job.task)].append(job.id)
    recorded: dict[tuple[str, str | None], list[Evaluation]] = defaultdict(list)
    for evaluation in sorted(evaluations, key=lambda evaluation: evaluation.id or 0):
        recorded[(evaluation.node, evaluation.task)].append(evaluation)
    return {
        job_id: evaluation
        for key, job_ids in finished.items()
        for job_id, evaluation in zip(job_ids, recorded.get(key, []), strict=False)
    }


def _job_labels(
    run: Run, job: Job, evaluation: Evaluation | None, tree: CladeTree, nodes: dict, channel: re.Match[str]
) -> dict[str, Any]:
    """What every exchange of one job (one channel of it) is labelled with."""
    labels: dict[str, Any] = {
        "job": job.id,
        "job_kind": str(job.kind),
        "step": channel["step"],
        "node": job.node,
        "task": job.task,
        "split": str(evaluation.split) if evaluation else (str(job.split) if job.split else None),
        "outcome": str(evaluation.outcome) if evaluation else None,
        "child": None,
        "child_valid": None,
        "child_better": None,
        "candidate": None,
        "candidate_chosen": None,
    }
    if job.kind != JobKind.EXPAND:
        return labels
    child = made_node(job)
    candidate = int(channel["candidate"] or 1)
    chosen = {c.number: c.chosen for c in read_candidates(run.path / "logs" / f"job-{job.id}")}
    labels |= {"child": child, "candidate": candidate, "candidate_chosen": chosen.get(candidate)}
    if child is not None and child in nodes:
        labels["child_valid"] = nodes[child].valid
        labels["child_better"] = nodes[child].valid and _beats(tree, child, job.node)
    return labels


def _beats(tree: CladeTree, child: str, parent: str) -> bool | None:
    """The child's own dev pass rate above its parent's; None when either has no results."""
    if child not in tree or parent not in tree:
        return None
    mine, theirs = tree.own_counts(child), tree.own_counts(parent)
    if not mine.total or not theirs.total:
        return None
    return mine.successes / mine.total > theirs.successes / theirs.total
