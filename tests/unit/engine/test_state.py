"""The runner's state: the one clade tree, counted by the one rule the archive's views use too."""

from __future__ import annotations

import numpy as np

from evolve.archive import Run
from evolve.archive.summary import run_summary
from evolve.engine.state import SearchState
from evolve.notebook import load_run
from evolve.search import DGMPolicy, HGMPolicy, SearchView

TASKS = ["t1", "t2", "t3"]


def _grown_run(run: Run, code) -> Run:
    root = run.add_node(code({"a.py": "0\n"}))
    child = run.add_node(code({"a.py": "1\n"}), parent=root.id, origin="self_modify")
    for node, task, outcome, split in [
        (root.id, "t1", "pass", "dev"),
        (root.id, "t1", "fail", "dev"),  # a repeat (e.g. a re-run job): the first result stands
        (root.id, "t2", "infra", "dev"),  # never counts
        (root.id, "t2", "fail", "dev"),
        (root.id, "other", "pass", "dev"),  # not a search task (`evolve eval` on the whole split)
        (root.id, "h1", "pass", "heldout"),  # final scoring only
        (child.id, "t1", "pass", "dev"),
        (child.id, "t3", "pass", "dev"),
        (child.id, "t3", "pass", "dev"),
    ]:
        run.record_evaluation(node, task, outcome, split=split)
    return run


def test_status_summary_and_notebooks_count_what_the_search_counts(run, code):
    _grown_run(run, code)
    state = SearchState.from_run(run, TASKS)
    assert state.used == 4
    shown = run.tree()
    for node in state.tree:
        assert shown.own_counts(node) == state.tree.own_counts(node)
        assert shown.clade_counts(node) == state.tree.clade_counts(node)
    assert shown.own_counts("0").total == 2 and shown.clade_counts("0").successes == 3
    best = run_summary(run)["best_node"]
    assert (best["passed"], best["evaluated"]) == (2, 2)  # the child: 2/2, its repeat not counted
    loaded = load_run(run.path)
    try:
        assert loaded.nodes.loc["0", "successes"] == 1 and loaded.nodes.loc["0", "failures"] == 1
    finally:
        loaded.close()


def test_a_run_without_recorded_tasks_counts_every_task_once(run, code):
    _grown_run(run, code)
    assert run.tree().own_counts("0").total == 3  # t1, t2 and `other`; repeats still count once


def test_the_view_is_a_snapshot_and_decides_as_a_view_of_plain_arrays(run, code):
    _grown_run(run, code)
    state = SearchState.from_run(run, TASKS)
    state.pending_evaluations[7] = ("1", "t2")
    view = state.view(budget=20, expansions_left=3)
    state.add_result("0", "t3", "pass")
    state.pending_evaluations.clear()
    assert view.used == 4 and view.successes.tolist() == [1, 2] and view.in_flight_evaluations == 1
    plain = SearchView(
        ids=("0", "1"), parent=[-1, 0], valid=[True, True], successes=[1, 2], failures=[1, 0],
        evaluated=[{"t1", "t2"}, {"t1", "t3"}], task_order=TASKS, budget=20, used=4,
        pending_evaluations=[(1, "t2")], expansions_left=3,
    )  # fmt: skip
    assert view.clade_successes.tolist() == plain.clade_successes.tolist()
    for policy in (HGMPolicy(), DGMPolicy()):
        for seed in range(20):
            ours = policy.next_action(view, np.random.default_rng(seed))
            assert ours == policy.next_action(plain, np.random.default_rng(seed))
        assert policy.best(view) == policy.best(plain)
