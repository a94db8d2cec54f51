"""Progress curves: the best belief's and the best observed own pass rate, after each counted result.

The dev results are replayed in recording order into a fresh clade tree by the search's counting rule
(`count_result`'s, on plain rows, fed to the tree in bulk between checkpoints); at up to `POINTS`
checkpoints the best belief is the run's policy's `best` of that tree (evolve/archive/best.py's rule). The
tree at the end is the run's tree (`Run.tree()` builds it from the same rows by the same rule), so
the report builds it once.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from evolve.archive.records import Node
from evolve.archive.store import Run
from evolve.archive.tree import CladeTree, build_tree, recorded_tasks
from evolve.archive.vocab import Outcome
from evolve.config import PolicyConfig
from evolve.search.policies import policies_from_config

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
    """The highest own pass rate then of a valid node with at least `min_results` results (a node with
    one lucky pass is not shown as 1.0)."""
    seed: list[float | None] = field(default_factory=list)
    """The seed's (the first root's) own pass rate then: the baseline."""
    min_results: int = 1


Row = tuple[str, str, str, str, float]
"""One evaluation as the report reads it: node, task, split, outcome, created (plain, not a record)."""


def progress_curves(run: Run, nodes: list[Node], rows: list[Row], section: PolicyConfig,
                    points: int = POINTS) -> tuple[Curves, CladeTree]:  # fmt: skip
    """The curves, and the clade tree of the dev results (`rows` in recording order).

    The rule is `count_result`'s, applied here to plain rows and fed to the tree in bulk at each
    checkpoint (`CladeTree.record_counts`): a million results are not a million tree updates. A
    test compares it with the row-by-row replay."""
    replay = build_tree(nodes, [], None)
    tasks, policy = recorded_tasks(run), policies_from_config(section)[section.name]
    order = tuple(sorted(tasks)) if tasks is not None else ()  # staged policies read how many tasks there are
    start = min((n.created for n in nodes), default=0.0)
    counted = [row for row in rows if row[2] == "dev"]
    total = len(counted)  # an upper bound of the counted results: checkpoints spread over the rows
    least = section.hgm.min_evals
    curves = Curves(min_results=least)
    if not total:
        return curves, replay
    seed = replay.position(replay.roots[0]) if replay.roots else None
    marks = set(np.unique(np.linspace(1, total, min(points, total), dtype=int)).tolist())
    success = {o.value: o.counts for o in Outcome}
    seen: set[tuple[str, str]] = set()
    pending: dict[str, list] = {}  # node -> [successes, failures, tasks] since the last checkpoint
    for index, (node, task, _, outcome, created) in enumerate(counted, start=1):
        passed = success[outcome]
        if passed is not None and (tasks is None or task in tasks) and (node, task) not in seen:
            seen.add((node, task))
            counts = pending.setdefault(node, [0, 0, set()])
            counts[0 if passed else 1] += 1
            counts[2].add(task)
        if index not in marks:
            continue
        replay.record_counts((n, c[0], c[1], frozenset(c[2])) for n, c in pending.items())
        pending.clear()
        view = replay.view(order)
        best = policy.best(view)
        done = view.successes + view.failures
        rates = np.divide(view.successes, done, out=np.full(done.shape, np.nan), where=done > 0)
        belief = None
        if best is not None and done[replay.position(best)]:
            belief = float(rates[replay.position(best)])
        curves.evaluations.append(replay.results)
        curves.hours.append(max(created - start, 0.0) / 3600)
        curves.best_belief.append(belief)
        observed = rates[view.valid & (done >= least)]
        curves.best_observed.append(float(observed.max()) if observed.size else None)
        curves.seed.append(None if seed is None or not done[seed] else float(rates[seed]))
    return curves, replay
