"""What a tracker is sent for each event of the runner: one `Step` of numbers and labels, read from the
archive right after the runner recorded the result (so each figure is the archive's own).

Names follow the trackers' usual `group/name` form: `evaluation/*` and `expansion/*` describe the job
just recorded, `run/*` the totals so far, `best/*` the run's final agent as it stands (`run_best`: the
run's own policy on the counted results), `clade/*` the clade of the node just evaluated or expanded
(the counts HGM's clade metaproductivity reads), `code_edit_rate` the valid children with a code edit
of all expansions (evolve.archive.edits).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from evolve.archive.best import run_best
from evolve.archive.compute import cpu_hours, run_cpu_hours
from evolve.archive.edits import EditKind, EditRate, code_edit_rate, edit_kind
from evolve.archive.store import Run
from evolve.archive.vocab import Outcome
from evolve.engine.events import Evaluated, Expanded, Finished, RunEvent


@dataclass(frozen=True)
class Step:
    """One event as a tracker logs it: `step` counts the results recorded so far (evaluations of any
    split and expansions), so a resumed run goes on from where the last session stopped; the session
    moves it past the step before where two events read the same count."""

    step: int
    metrics: dict[str, float]
    labels: dict[str, str] = field(default_factory=dict)
    """Text the event is about (node, task, outcome); trackers without text metrics keep them aside."""

    def row(self) -> dict[str, object]:
        """The step as one flat record (the `events.jsonl` a tracker receives as an artifact)."""
        return {"step": self.step, **self.metrics, **self.labels}


class EditCounter:
    """The code-edit rate kept up to date one child at a time (the run's rate is read once, at start)."""

    def __init__(self, run: Run) -> None:
        start = code_edit_rate(run)
        self.known = start is not None  # a long run's rate is not counted (evolve.archive.edits.RATE_LIMIT)
        self.rate = start or EditRate(0, 0)

    def add(self, run: Run, child: str, valid: bool) -> None:
        code = valid and self.known and edit_kind(run, child) == EditKind.CODE
        self.rate = EditRate(self.rate.code + int(code), self.rate.expansions + 1)


def results_recorded(run: Run) -> int:
    """Evaluations of any split and expansions recorded so far (the tracker's step)."""
    evaluations, _ = run.evaluation_usage()
    return evaluations + max(len(run.nodes()) - 1, 0)


def event_step(run: Run, event: RunEvent, cpus: float, edits: EditCounter) -> Step:
    """The `Step` of one event, read from `run` after the runner recorded it."""
    metrics: dict[str, float] = {}
    labels: dict[str, str] = {}
    clade_of: str | None = None
    if isinstance(event, Evaluated):
        metrics |= _job_metrics("evaluation", run, event.job.id, cpus, event.tokens, event.cost_usd)
        metrics["evaluation/passed"] = float(event.outcome == Outcome.PASS)
        labels |= {
            "evaluation/node": event.node,
            "evaluation/task": event.task,
            "evaluation/split": event.split,
            "evaluation/outcome": event.outcome,
        }
        clade_of = event.node
    elif isinstance(event, Expanded):
        edits.add(run, event.child, event.valid)
        metrics |= _job_metrics("expansion", run, event.job.id, cpus, event.tokens, event.cost_usd)
        metrics["expansion/valid"] = float(event.valid)
        labels |= {"expansion/parent": event.parent, "expansion/child": event.child}
        clade_of = event.parent
    run_metrics, best = _run_metrics(run, cpus, clade_of)
    metrics |= run_metrics
    if best is not None:
        labels["best/node"] = best
    if edits.known and edits.rate.rate is not None:
        metrics["code_edit_rate"] = edits.rate.rate
    if isinstance(event, Finished):
        outcome = event.outcome
        metrics["final/heldout_passed"] = float(outcome.heldout_passed)
        metrics["final/heldout_total"] = float(outcome.heldout_total)
        if outcome.heldout_total and outcome.heldout_scored:
            metrics["final/heldout_pass_rate"] = outcome.heldout_passed / outcome.heldout_total
        labels |= {"final/node": outcome.best_node or "", "final/stop": str(outcome.stop_reason)}
    return Step(results_recorded(run), metrics, labels)


def _job_metrics(
    kind: str, run: Run, job_id: int, cpus: float, tokens: int, dollars: float
) -> dict[str, float]:
    job = run.job(job_id)
    seconds = max((job.finished or job.started) - job.started, 0.0)
    return {
        f"{kind}/tokens": float(tokens),
        f"{kind}/dollars": dollars,
        f"{kind}/seconds": seconds,
        f"{kind}/cpu_hours": cpu_hours(seconds, cpus),
    }


def _run_metrics(run: Run, cpus: float, clade_of: str | None) -> tuple[dict[str, float], str | None]:
    """The run's totals, its final agent's and a clade's counts; and the final agent's id."""
    tree = run.tree(with_tasks=False)
    tokens, dollars = run.usage_totals()
    nodes = run.nodes()
    metrics = {
        "run/evaluations": float(sum(tree.own_counts(node).total for node in tree)),
        "run/expansions": float(max(len(nodes) - 1, 0)),
        "run/valid_nodes": float(sum(node.valid for node in nodes)),
        "run/tokens": float(tokens),
        "run/dollars": dollars,
        "run/cpu_hours": run_cpu_hours(run, cpus, now=time.time()),
    }
    best = run_best(run, tree)
    if best is not None:
        metrics |= {"best/successes": float(best.successes), "best/evaluated": float(best.total)}
        if best.total:
            metrics["best/pass_rate"] = best.successes / best.total
    if clade_of is not None and clade_of in tree:
        clade = tree.clade_counts(clade_of)
        metrics |= {"clade/successes": float(clade.successes), "clade/failures": float(clade.failures)}
        if clade.total:
            metrics["clade/pass_rate"] = clade.successes / clade.total
    return metrics, None if best is None else best.node
