"""The Darwin Gödel Machine policy and the greedy and random baselines (docs/design.md §Search).

All three use DGM's staged evaluation (`evolve.search.staged`) and name the best mean over fully
evaluated nodes as the final agent; they differ only in how a parent is chosen.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from evolve.search.estimates import dgm_parent_weights, mean_accuracy
from evolve.search.params import DGMParams, StagedParams
from evolve.search.staged import best_mean, staged_next_action
from evolve.search.types import Action, NodeId
from evolve.search.view import SearchView


def dgm_parent_probabilities(view: SearchView, members: np.ndarray, params: DGMParams) -> np.ndarray:
    """`p_i ∝ sigmoid(λ(α_i − α0)) / (1 + n_i)` over archive members, `α_i = 1` excluded
    (docs/design.md §Search);
    `α_i` is the node's accuracy, `n_i` its number of valid children. Zero outside `members`."""
    accuracy = mean_accuracy(view.successes, view.failures)
    weights = dgm_parent_weights(accuracy, view.valid_children, params.lam, params.alpha0)
    weights = np.where(members, weights, 0.0)
    total = weights.sum()
    return weights / total if total > 0 else weights


@dataclass(frozen=True)
class StagedPolicy:
    """DGM's staged evaluation and best-mean final agent; a subclass says how a parent is chosen."""

    params: StagedParams = field(default_factory=StagedParams)
    name: str = "staged"

    def _parent(self, view: SearchView, members: np.ndarray, rng: np.random.Generator) -> int | None:
        raise NotImplementedError

    def next_action(self, view: SearchView, rng: np.random.Generator) -> Action:
        return staged_next_action(view, rng, self.params, self._parent)

    def best(self, view: SearchView) -> NodeId | None:
        return best_mean(view, self.params)

    def cmp_estimate(self, view: SearchView) -> np.ndarray:
        """What DGM-style parent choice reads as a node's promise: its own mean accuracy."""
        return mean_accuracy(view.successes, view.failures)


@dataclass(frozen=True)
class DGMPolicy(StagedPolicy):
    """DGM: parents sampled by score and novelty, children staged-evaluated."""

    params: DGMParams = field(default_factory=DGMParams)
    name: str = "dgm"

    def _parent(self, view: SearchView, members: np.ndarray, rng: np.random.Generator) -> int | None:
        probabilities = dgm_parent_probabilities(view, members, self.params)
        if probabilities.sum() <= 0:
            return None  # every member solved everything: DGM has no parent left
        return int(rng.choice(view.size, p=probabilities))


@dataclass(frozen=True)
class GreedyPolicy(StagedPolicy):
    """Expand the node with the best mean accuracy (ties broken at random); staged evaluation."""

    name: str = "greedy"

    def _parent(self, view: SearchView, members: np.ndarray, rng: np.random.Generator) -> int | None:
        accuracy = np.where(members, mean_accuracy(view.successes, view.failures), -1.0)
        return int(rng.choice(np.flatnonzero(members & (accuracy == accuracy.max()))))


@dataclass(frozen=True)
class RandomPolicy(StagedPolicy):
    """Expand a uniformly random archive member; staged evaluation."""

    name: str = "random"

    def _parent(self, view: SearchView, members: np.ndarray, rng: np.random.Generator) -> int | None:
        return int(rng.choice(np.flatnonzero(members)))
