"""The Darwin Gödel Machine policy and the greedy and random baselines (DESIGN.md §5).

All three use DGM's staged evaluation (`evolve.search.staged`) and name the best mean over fully
evaluated nodes as the final agent; they differ only in how a parent is chosen.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from evolve.search.estimates import dgm_parent_weights, mean_accuracy
from evolve.search.staged import StagedParams, best_mean, staged_next_action
from evolve.search.types import Action, NodeId
from evolve.search.view import SearchView


@dataclass(frozen=True)
class DGMParams:
    """DGM parent selection and staged evaluation (the run config's `policy.dgm` has the same names)."""

    lam: float = 10.0
    """Sigmoid steepness lambda."""
    alpha0: float = 0.5
    """Sigmoid midpoint alpha_0."""
    stages: tuple[int, ...] = (10, 50)
    """Tasks per evaluation stage before the rest."""
    stage_threshold: float = 0.4
    """Fraction solved in a stage needed to run the next stage."""
    top_k_full: int = 2
    """After the last stage, nodes among the top k get the remaining tasks."""

    @property
    def staged(self) -> StagedParams:
        return StagedParams(tuple(self.stages), self.stage_threshold, self.top_k_full)


def dgm_parent_probabilities(view: SearchView, members: np.ndarray, params: DGMParams) -> np.ndarray:
    """`p_i ∝ sigmoid(λ(α_i − α0)) / (1 + n_i)` over archive members, `α_i = 1` excluded (DESIGN.md §5);
    `α_i` is the node's accuracy, `n_i` its number of valid children. Zero outside `members`."""
    accuracy = mean_accuracy(view.successes, view.failures)
    weights = dgm_parent_weights(accuracy, view.valid_children, params.lam, params.alpha0)
    weights = np.where(members, weights, 0.0)
    total = weights.sum()
    return weights / total if total > 0 else weights


@dataclass(frozen=True)
class DGMPolicy:
    """DGM: parents sampled by score and novelty, children staged-evaluated."""

    params: DGMParams = DGMParams()
    name: str = "dgm"

    def _parent(self, view: SearchView, members: np.ndarray, rng: np.random.Generator) -> int | None:
        probabilities = dgm_parent_probabilities(view, members, self.params)
        if probabilities.sum() <= 0:
            return None  # every member solved everything: DGM has no parent left
        return int(rng.choice(view.size, p=probabilities))

    def next_action(self, view: SearchView, rng: np.random.Generator) -> Action:
        return staged_next_action(view, rng, self.params.staged, self._parent)

    def best(self, view: SearchView) -> NodeId | None:
        return best_mean(view, self.params.staged)


@dataclass(frozen=True)
class GreedyPolicy:
    """Expand the node with the best mean accuracy (ties broken at random); staged evaluation."""

    params: StagedParams = field(default_factory=StagedParams)
    name: str = "greedy"

    @staticmethod
    def _parent(view: SearchView, members: np.ndarray, rng: np.random.Generator) -> int | None:
        accuracy = np.where(members, mean_accuracy(view.successes, view.failures), -1.0)
        ties = np.flatnonzero(members & (accuracy == accuracy.max()))
        return int(rng.choice(ties))

    def next_action(self, view: SearchView, rng: np.random.Generator) -> Action:
        return staged_next_action(view, rng, self.params, self._parent)

    def best(self, view: SearchView) -> NodeId | None:
        return best_mean(view, self.params)


@dataclass(frozen=True)
class RandomPolicy:
    """Expand a uniformly random archive member; staged evaluation."""

    params: StagedParams = field(default_factory=StagedParams)
    name: str = "random"

    @staticmethod
    def _parent(view: SearchView, members: np.ndarray, rng: np.random.Generator) -> int | None:
        return int(rng.choice(np.flatnonzero(members)))

    def next_action(self, view: SearchView, rng: np.random.Generator) -> Action:
        return staged_next_action(view, rng, self.params, self._parent)

    def best(self, view: SearchView) -> NodeId | None:
        return best_mean(view, self.params)
