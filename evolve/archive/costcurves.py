"""What papers of this field plot to compare searches: the best-so-far against expansions and against
CPU-hours, the score distribution per generation, and what each improvement of the best-so-far cost.
The report (evolve/report/costs.py) and the notebooks (evolve.notebook.plots) draw the same numbers.

The run is replayed in time order: dev results counted by the search's rule (`count_result`), children
as they were made, jobs' CPU-hours as they ended (`compute.cpu_hours`, as the budget counts them). The
best-so-far is the highest own pass rate then of a valid node with at least `min_results` counted
results (one lucky pass is not shown as 1.0). A generation is a node's depth in the tree (the seed is
generation 0): the engine has no generation barrier, so depth is the generation a child belongs to.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from evolve.archive.compute import cpu_hours, sandbox_cpus
from evolve.archive.store import Run
from evolve.archive.tree import build_tree, count_result, recorded_tasks
from evolve.archive.vocab import JobState, Split

POINTS = 200
"""Points per curve kept (evenly spaced over the run's events; every improvement is kept too)."""


@dataclass(frozen=True)
class Improvement:
    """A new leader of the best-so-far, and what the search spent since the previous leader took the lead."""

    node: str
    rate: float
    expansions: int
    """Children made when it was reached."""
    cpu_hours: float
    spent_expansions: int
    spent_cpu_hours: float


@dataclass(frozen=True)
class CostCurves:
    expansions: list[int] = field(default_factory=list)
    cpu_hours: list[float] = field(default_factory=list)
    best: list[float | None] = field(default_factory=list)
    """The best-so-far at each point (None: no valid node with enough results yet)."""
    generations: dict[int, list[float]] = field(default_factory=dict)
    """Generation (depth) → the own pass rate of each valid node of it with counted results, at the end."""
    improvements: list[Improvement] = field(default_factory=list)
    """Each time a node took the lead for the first time with a higher rate than the leader's then (the
    first leader, the seed as a rule, is the baseline)."""
    min_results: int = 1


def cost_curves(run: Run, min_results: int | None = None, points: int = POINTS) -> CostCurves:
    """The curves of `run` (`min_results`: default the run's policy's `hgm.min_evals`, as the report's)."""
    least = run.config.policy.hgm.min_evals if min_results is None else min_results
    nodes = run.nodes()
    tree = build_tree(nodes, [], None)
    tasks = recorded_tasks(run)
    cpus = sandbox_cpus(run)
    valid = {node.id: node.valid for node in nodes}
    events: list[tuple[float, int, str, str, str, float]] = []  # time, order, kind, node, task/outcome, hours
    for node in nodes:
        if node.parent is not None:
            events.append((node.created, 1, "child", node.id, "", 0.0))
    for evaluation in run.evaluations(split=Split.DEV):
        events.append(
            (
                evaluation.created,
                2,
                "result",
                evaluation.node,
                evaluation.task + "\0" + evaluation.outcome,
                0.0,
            )
        )
    for job in run.jobs():
        if job.finished is not None and job.state != JobState.CANCELLED:
            events.append((job.finished, 0, "job", job.node, "", cpu_hours(job.finished - job.started, cpus)))
    events.sort()
    keep = set(np.unique(np.linspace(0, len(events) - 1, min(points, len(events)), dtype=int)).tolist())
    curves = CostCurves(min_results=least)
    rates: dict[str, float] = {}
    children, hours = 0, 0.0
    since: tuple[int, float] = (0, 0.0)
    led: set[str] = set()
    for index, (_, _, kind, about, detail, job_hours) in enumerate(events):
        improved = False
        if kind == "job":
            hours += job_hours
        elif kind == "child":
            children += 1
        else:
            task, _, outcome = detail.partition("\0")
            before = _leader(rates)
            if count_result(tree, about, task, outcome, tasks) and valid[about]:
                own = tree.own_counts(about)
                if own.total >= least and own.mean is not None:
                    rates[about] = own.mean
            after = _leader(rates)
            if before is None and after is not None:
                since = (children, hours)  # the first best is the baseline
            # A node taking the lead for the first time, with a higher rate than the leader's, is an
            # improvement; the leader's own rate moving with more results is not (more evidence, not a
            # better agent), nor is the lead passing back and forth between nodes whose rates are close.
            improved = (
                before is not None
                and after is not None
                and after[0] != before[0]
                and after[1] > before[1]
                and after[0] not in led
            )
            if after is not None:
                led.add(after[0])
            if improved and after is not None:
                curves.improvements.append(
                    Improvement(after[0], after[1], children, hours, children - since[0], hours - since[1])
                )
                since = (children, hours)
        if index in keep or improved:
            leader = _leader(rates)
            curves.expansions.append(children)
            curves.cpu_hours.append(hours)
            curves.best.append(None if leader is None else leader[1])
    for node in nodes:
        own = tree.own_counts(node.id)
        if node.valid and own.mean is not None:
            curves.generations.setdefault(tree.depth(node.id), []).append(own.mean)
    return curves


def _leader(rates: dict[str, float]) -> tuple[str, float] | None:
    """The node with the highest rate (the first made, of equals) and its rate; None when there is none."""
    if not rates:
        return None
    node = max(rates, key=lambda name: rates[name])
    return node, rates[node]
