"""SearchView: an immutable snapshot, cheap to build from plain lists."""

from __future__ import annotations

import numpy as np
import pytest

from evolve.search import SearchView


def test_view_computes_clade_counts_and_derived_counts(make_view):
    view = make_view([-1, 0, 0], [1, 2, 0], [1, 0, 3], valid=[True, True, False],
                     pending_evaluations=[(1, 5)], pending_expansions=[0, 0])  # fmt: skip
    assert view.clade_successes.tolist() == [3, 2, 0]
    assert view.clade_failures.tolist() == [4, 0, 3]
    assert view.done.tolist() == [2, 2, 3]
    assert view.tasks_left.tolist() == [18, 17, 17]
    assert view.pending_expansion_counts.tolist() == [2, 0, 0]
    assert view.valid_children.tolist() == [1, 0, 0]
    assert view.budget_left == 100 - 7 - 1
    assert view.index == {"n0": 0, "n1": 1, "n2": 2}


def test_view_arrays_are_read_only_copies():
    successes = np.array([1, 2])
    view = SearchView(ids=("a", "b"), parent=[-1, 0], valid=[True, True], successes=successes,
                      failures=[0, 0], evaluated=[{0}, {0, 1}], task_order=range(4), budget=10,
                      used=3)  # fmt: skip
    with pytest.raises(ValueError):
        view.successes[0] = 5
    successes[0] = 7  # the caller's array stays writable and the view does not see the change
    assert view.successes.tolist() == [1, 2]


def test_view_accepts_precomputed_clade_counts(make_view):
    view = SearchView(ids=("a", "b"), parent=[-1, 0], valid=[True, True], successes=[1, 1],
                      failures=[0, 1], evaluated=[{0}, {0, 1}], task_order=range(4), budget=10, used=3,
                      clade_successes=[2, 1], clade_failures=[1, 1])  # fmt: skip
    assert view.clade_successes.tolist() == [2, 1]


def test_view_rejects_children_before_parents_and_bad_shapes():
    with pytest.raises(ValueError, match="parent"):
        SearchView(ids=("a", "b"), parent=[1, -1], valid=[True, True], successes=[0, 0], failures=[0, 0],
                   evaluated=[set(), set()], task_order=(), budget=1, used=0)  # fmt: skip
    with pytest.raises(ValueError, match="valid"):
        SearchView(ids=("a",), parent=[-1], valid=[True, True], successes=[0], failures=[0],
                   evaluated=[set()], task_order=(), budget=1, used=0)  # fmt: skip


def test_next_task_skips_done_and_in_flight_tasks_in_run_order(make_view):
    view = SearchView(ids=("a",), parent=[-1], valid=[True], successes=[1], failures=[0],
                      evaluated=[{"t3"}], task_order=("t3", "t1", "t2"), budget=5, used=1,
                      pending_evaluations=[(0, "t1")])  # fmt: skip
    assert view.next_task(0) == "t2"
    assert view.tasks_left.tolist() == [1]


def test_empty_view():
    view = SearchView(ids=(), parent=[], valid=[], successes=[], failures=[], evaluated=[],
                      task_order=range(3), budget=5, used=0)  # fmt: skip
    assert view.size == 0 and view.clade_successes.size == 0
