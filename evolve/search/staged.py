"""DGM's staged evaluation, shared by the DGM, greedy and random policies (docs/design.md §Search).

A new node runs the first stage (10 tasks); if it solved ≥ 40 % of them, the next stage (50 more);
after the last stage, the rest of the tasks only if its accuracy is among the top k (2) of the nodes
that finished all stages. Tasks come in the view's run-wide order. Evaluation work that is due goes
before any expansion, as in DGM's generations (children are evaluated before the next parents are
chosen); the oldest node with work due goes first.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable

import numpy as np

from evolve.search.estimates import mean_accuracy
from evolve.search.params import StagedParams
from evolve.search.types import Action, Evaluate, Expand, NodeId, Stop
from evolve.search.view import SearchView


def stage_bounds(params: StagedParams, n_tasks: int) -> np.ndarray:
    """Cumulative task counts at the end of each stage, capped at the number of tasks."""
    # a list: np.cumsum of a tuple is slow
    return np.minimum(list(itertools.accumulate(params.stages)), n_tasks)


def evaluation_due(view: SearchView, params: StagedParams) -> np.ndarray:
    """Per node: may a task evaluation be started now under the staged rule (docs/design.md §Search)?"""
    n_tasks = len(view.task_order)
    bounds = stage_bounds(params, n_tasks)
    done, pending = view.done, view.pending_eval_counts
    started = done + pending
    accuracy = mean_accuracy(view.successes, view.failures)
    due = started < bounds[0]
    for lower, upper in itertools.pairwise(bounds):
        inside = (started > lower) & (started < upper)
        at_gate = (started == lower) & (pending == 0) & (accuracy >= params.stage_threshold)
        due |= (inside | at_gate) & (started < upper)
    last = bounds[-1]
    finished_stages = view.valid & (done >= last)
    if finished_stages.any():
        ranked = np.sort(accuracy[finished_stages])[::-1]
        cutoff = ranked[min(params.top_k_full, ranked.size) - 1]
    else:
        cutoff = np.inf
    inside = (started > last) & (started < n_tasks)
    at_gate = (started == last) & (pending == 0) & (accuracy >= cutoff) & (started < n_tasks)
    due |= inside | at_gate
    return due & view.valid & (view.tasks_left > 0)


def archive_members(view: SearchView, params: StagedParams) -> np.ndarray:
    """Nodes that may be chosen as parents: valid, with the first stage finished."""
    first = int(stage_bounds(params, len(view.task_order))[0]) if view.task_order else 0
    return view.valid & (view.done >= max(first, 1))


ParentChooser = Callable[[SearchView, np.ndarray, np.random.Generator], int | None]


def staged_next_action(
    view: SearchView, rng: np.random.Generator, params: StagedParams, choose_parent: ParentChooser
) -> Action:
    """Due evaluations first (oldest node first), then an expansion of `choose_parent`'s pick."""
    if view.budget_left == 0:
        return Stop("evaluation budget spent")
    due = np.flatnonzero(evaluation_due(view, params))
    if due.size:
        node = int(due[0])
        return Evaluate(view.ids[node], view.next_task(node))
    if view.expansions_left == 0:
        return Stop("expansion budget spent and no evaluation due")
    members = archive_members(view, params)
    parent = choose_parent(view, members, rng) if members.any() else None
    if parent is None:
        return Stop("empty tree" if view.size == 0 else "no node to expand or evaluate")
    return Expand(view.ids[parent])


def best_mean(view: SearchView, params: StagedParams) -> NodeId | None:
    """Best mean accuracy over fully evaluated valid nodes; without one, over nodes that got furthest
    (last stage, then first stage, then any evaluation); ties go to the older node."""
    n_tasks = len(view.task_order)
    bounds = stage_bounds(params, n_tasks) if n_tasks else np.zeros(1, dtype=int)
    accuracy = mean_accuracy(view.successes, view.failures)
    for needed in (n_tasks, int(bounds[-1]), int(bounds[0]), 1):
        mask = view.valid & (view.done >= max(needed, 1))
        if mask.any():
            candidates = np.flatnonzero(mask)
            return view.ids[int(candidates[int(np.argmax(accuracy[candidates]))])]
    valid = np.flatnonzero(view.valid)
    return view.ids[int(valid[0])] if valid.size else None
