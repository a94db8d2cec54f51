"""Progress curves: the best belief's and the best observed own pass rate, after each counted result.

The dev results are replayed in recording order into a fresh clade tree by the search's counting rule
(`count_result`); at up to `POINTS` checkpoints the best belief is `HGMPolicy.best` of that tree. The
tree at the end is the run's tree (`Run.tree()` builds it from the same rows by the same rule), so
the report builds it once.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from evolve.archive.records import Evaluation, Node
from evolve.archive.store import Run
from evolve.archive.tree import CladeTree, build_tree, count_result, recorded_tasks
from evolve.search import HGMParams, HGMPolicy

POINTS = 200
"""Checkpoints per curve: the page stays small on a run of a million evaluations."""


@dataclass(frozen=True)
class Curves:
    evaluations: list[int] = field(default_factory=list)
    """Counted results at each checkpoint."""
    hours: list[float] = field(default_factory=list)
    """Wall time at each checkpoint, hours since the run's first node."""
    best_belief: list[float | None] = field(default_factory=list)
    """Own pass rate of the best-belief node then (None: no valid node)."""
    best_observed: list[float | None] = field(default_factory=list)
    """The highest own pass rate of any valid node with a result then."""


def progress_curves(run: Run, nodes: list[Node], evaluations: list[Evaluation], params: HGMParams,
                    points: int = POINTS) -> tuple[Curves, CladeTree]:  # fmt: skip
    """The curves, and the clade tree of the dev results (`evaluations` in recording order)."""
    replay = build_tree(nodes, [], None)
    tasks, policy = recorded_tasks(run), HGMPolicy(params)
    start = min((n.created for n in nodes), default=0.0)
    counted = [e for e in evaluations if e.split == "dev"]
    total = len(counted)  # an upper bound of the counted results: checkpoints spread over the rows
    curves = Curves()
    if not total:
        return curves, replay
    marks = set(np.unique(np.linspace(1, total, min(points, total), dtype=int)).tolist())
    for index, evaluation in enumerate(counted, start=1):
        count_result(replay, evaluation.node, evaluation.task, evaluation.outcome, tasks)
        if index not in marks:
            continue
        view = replay.view()
        best = policy.best(view)
        done = view.successes + view.failures
        rates = np.divide(view.successes, done, out=np.full(done.shape, np.nan), where=done > 0)
        belief = None
        if best is not None and done[replay.position(best)]:
            belief = float(rates[replay.position(best)])
        curves.evaluations.append(replay.results)
        curves.hours.append(max(evaluation.created - start, 0.0) / 3600)
        curves.best_belief.append(belief)
        observed = rates[view.valid & (done > 0)]
        curves.best_observed.append(float(observed.max()) if observed.size else None)
    return curves, replay
