"""The report's progress curves (the rule on plain rows, fed to the tree in bulk at checkpoints) equal
the row-by-row replay by `count_result`, on archives with repeats, infra, held-out rows and foreign tasks."""

import numpy as np
import pytest

from evolve.archive.tree import build_tree, count_result, record_tasks, recorded_tasks
from evolve.config import PolicyConfig
from evolve.report.progress import progress_curves
from evolve.search import HGMParams, HGMPolicy
from tests.unit.archive.test_counts import _fill


def _row_by_row(run, nodes, rows, params, points):
    """The curves as the report computed them before: one `count_result` per row, a view per checkpoint."""
    replay, tasks, policy = build_tree(nodes, [], None), recorded_tasks(run), HGMPolicy(params)
    start = min(n.created for n in nodes)
    counted = [r for r in rows if r[2] == "dev"]
    marks = set(np.unique(np.linspace(1, len(counted), min(points, len(counted)), dtype=int)).tolist())
    curve = []
    for index, (node, task, _, outcome, created) in enumerate(counted, start=1):
        count_result(replay, node, task, outcome, tasks)
        if index in marks:
            view = replay.view()
            best = policy.best(view)
            done = view.successes + view.failures
            rates = np.divide(view.successes, done, out=np.full(done.shape, np.nan), where=done > 0)
            belief = (
                float(rates[replay.position(best)])
                if best is not None and done[replay.position(best)]
                else None
            )
            observed = rates[view.valid & (done >= params.min_evals)]
            curve.append(
                (
                    replay.results,
                    max(created - start, 0.0) / 3600,
                    belief,
                    float(observed.max()) if observed.size else None,
                )
            )
    return curve, replay


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("points", [7, 200])
def test_bulk_curves_equal_the_row_by_row_replay(run, seed, points):
    _fill(run, seed)
    if seed:
        record_tasks(run, ["t0", "t2", "t3", "t5", "imported"])
    nodes = run.nodes()
    rows = run._rows("SELECT node, task, split, outcome, created FROM evaluations ORDER BY id")
    params = HGMParams(min_evals=2)
    curves, tree = progress_curves(run, nodes, rows, PolicyConfig(hgm=params), points)
    expected, replay = _row_by_row(run, nodes, rows, params, points)
    got = list(zip(curves.evaluations, curves.hours, curves.best_belief, curves.best_observed, strict=True))
    assert got == expected
    for node in replay:
        assert tree.own_counts(node) == replay.own_counts(node) and tree.evaluated(node) == replay.evaluated(
            node
        )
        assert tree.clade_counts(node) == replay.clade_counts(node)
