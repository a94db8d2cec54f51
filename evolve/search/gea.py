"""Group-Evolving Agents, `policy.name = "gea"` (Weng et al., arXiv 2602.04837).

Each iteration selects a parent group of K agents from the archive by the performance-novelty
criterion and makes one offspring per parent (an offspring group of the same size K), dispatched as
one unit (`ExpandGroup`, one search decision); the offspring's instructions carry the group's pooled
experience (evolve.meta.experience, added by the worker). An agent `i` is its task-success vector
`z_i ∈ {0,1}^D` over the probe tasks; `d(i, j) = 1 − z_i·z_j / (‖z_i‖‖z_j‖ + ε)`;
`nov(i)` is the mean `d(i, j)` over its M nearest archive members; `score(i) = α_i · nov(i)`, α_i its
accuracy; the group is the top K by score. Deviations, as docs/search.md "DGM, HGM and GEA" lists them: the
probe tasks are the first evaluation stage's tasks in the run-wide order (the paper does not say
which), an agent alone in the archive has novelty 1, ties are broken by the run-seeded generator,
offspring are evaluated by DGM's staged rule, and an iteration waits for its offspring's results.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from evolve.search.dgm import StagedPolicy
from evolve.search.estimates import mean_accuracy
from evolve.search.params import GEAParams
from evolve.search.staged import archive_members, evaluation_due, stage_bounds
from evolve.search.types import Action, Evaluate, ExpandGroup, Stop, TaskId
from evolve.search.view import SearchView


def probe_tasks(view: SearchView, params: GEAParams) -> tuple[TaskId, ...]:
    """The D probe tasks: the first evaluation stage's tasks in the run-wide order (every archive
    member has finished them, so every vector is complete)."""
    if not view.task_order:
        return ()
    return view.task_order[: int(stage_bounds(params, len(view.task_order))[0])]


def success_vectors(view: SearchView, nodes: np.ndarray, probes: Sequence[TaskId]) -> np.ndarray:
    """`z_i ∈ {0,1}^D` per node of `nodes`: 1 where the node passed the probe task (the archive's
    graded outcomes, never what an agent printed)."""
    if view.size and not view.solved:
        raise ValueError("GEA needs a SearchView with per-task outcomes (`solved`)")
    return np.array([[task in view.solved[int(i)] for task in probes] for i in nodes], dtype=float).reshape(
        len(nodes), len(probes)
    )


def cosine_distances(z: np.ndarray, epsilon: float) -> np.ndarray:
    """`d(i, j) = 1 − z_i·z_j / (‖z_i‖₂‖z_j‖₂ + ε)` for every pair of rows of `z`."""
    norms = np.linalg.norm(z, axis=1)
    return 1.0 - (z @ z.T) / (np.outer(norms, norms) + epsilon)


def novelty(distances: np.ndarray, neighbours: int) -> np.ndarray:
    """`nov(i) = (1/M) Σ_{j ∈ N_M(i)} d(i, j)`: the mean distance to the M nearest other agents
    (all of them when there are fewer than M); 1 for an agent alone (nothing is like it)."""
    n = distances.shape[0]
    if n < 2:
        return np.ones(n)
    others = distances + np.diag(np.full(n, np.inf))  # an agent is not its own neighbour
    nearest = np.sort(others, axis=1)[:, : min(neighbours, n - 1)]
    return nearest.mean(axis=1)


def novelty_of(z: np.ndarray, neighbours: int, epsilon: float, rows: int = 256) -> np.ndarray:
    """`novelty(cosine_distances(z, ε), M)` without the n×n matrix: agents with the same vector share
    their distances (a vector over D probes has at most 2^D values), so the work is over the U distinct
    vectors, a block of rows at a time (memory O(rows · U)); equal distances are taken with their
    multiplicity, an agent's own vector once less."""
    n = z.shape[0]
    if n < 2:
        return np.ones(n)
    m = min(neighbours, n - 1)
    unique, inverse, counts = np.unique(z, axis=0, return_inverse=True, return_counts=True)
    norms = np.linalg.norm(unique, axis=1)
    per_unique = np.empty(len(unique))
    for start in range(0, len(unique), rows):
        block = np.arange(start, min(start + rows, len(unique)))
        d = 1.0 - (unique[block] @ unique.T) / (np.outer(norms[block], norms) + epsilon)
        order = np.argsort(d, axis=1, kind="stable")
        copies = np.broadcast_to(counts, d.shape).copy()
        copies[np.arange(len(block)), block] -= 1  # an agent is not its own neighbour
        copies = np.take_along_axis(copies, order, axis=1)
        before = np.cumsum(copies, axis=1) - copies
        taken = np.clip(m - before, 0, copies)  # how many of each distance fall among the M nearest
        per_unique[block] = (np.take_along_axis(d, order, axis=1) * taken).sum(axis=1) / m
    return per_unique[inverse.reshape(-1)]


def combined_score(accuracy: np.ndarray, novelty_: np.ndarray) -> np.ndarray:
    """`score(i) = α_i · nov(i)`: performance times novelty."""
    return np.asarray(accuracy, float) * np.asarray(novelty_, float)


def top_k(scores: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
    """Positions of the k best scores, best first; equal scores in an order drawn from `rng`."""
    shuffled = rng.permutation(len(scores))
    ranked = shuffled[np.argsort(-np.asarray(scores)[shuffled], kind="stable")]
    return ranked[:k]


@dataclass(frozen=True)
class GroupScores:
    """The criterion's terms over the archive members (positions in the view)."""

    members: np.ndarray
    accuracy: np.ndarray
    novelty: np.ndarray
    score: np.ndarray


def group_scores(view: SearchView, params: GEAParams) -> GroupScores:
    """Accuracy, novelty and combined score of every archive member (valid, probes finished)."""
    members = np.flatnonzero(archive_members(view, params))
    z = success_vectors(view, members, probe_tasks(view, params))
    accuracy = mean_accuracy(view.successes, view.failures)[members]
    nov = novelty_of(z, params.neighbours, params.epsilon)
    return GroupScores(members, accuracy, nov, combined_score(accuracy, nov))


def parent_group(view: SearchView, params: GEAParams, rng: np.random.Generator) -> tuple[int, ...]:
    """The parent group: the top-K archive members by `α · nov`, capped by the expansions left."""
    scores = group_scores(view, params)
    k = params.group_size if view.expansions_left is None else min(params.group_size, view.expansions_left)
    return tuple(int(scores.members[i]) for i in top_k(scores.score, k, rng))


@dataclass(frozen=True)
class GEAPolicy(StagedPolicy):
    """GEA: a parent group by performance-novelty, one offspring each, staged evaluation."""

    params: GEAParams = field(default_factory=GEAParams)
    name: str = "gea"

    def next_action(self, view: SearchView, rng: np.random.Generator) -> Action:
        """Due evaluations first (oldest node first); then, once the last iteration's offspring are
        born and evaluated, the next parent group as one `ExpandGroup`."""
        if view.budget_left == 0:
            return Stop("evaluation budget spent")
        due = np.flatnonzero(evaluation_due(view, self.params))
        if due.size:
            node = int(due[0])
            return Evaluate(view.ids[node], view.next_task(node))
        if view.pending_expansions or view.pending_evaluations:
            return Stop("a group iteration is in flight: waiting for its offspring's results")
        if view.expansions_left == 0:
            return Stop("expansion budget spent and no evaluation due")
        if not archive_members(view, self.params).any():
            return Stop("empty tree" if view.size == 0 else "no node to expand or evaluate")
        return ExpandGroup.of(tuple(view.ids[i] for i in parent_group(view, self.params, rng)))
