"""The Huxley-Gödel Machine policy (docs/design.md §Search; Wang et al., arXiv 2510.21614).

Expansion is guided by the clade-metaproductivity estimate `Beta(τ(1+S), τ(1+F))`; evaluation by the
node's own `Beta(τ(1+s), τ(1+f))`; the two are interleaved by the widening rule `N^α ≥ |T|`.
Departures from the public HGM code (docs/design.md §Search): clade counts never alias own counts, the
cool-down τ is on, and tasks come in one run-wide order so nodes are compared on the same tasks.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from evolve.search.estimates import (
    clade_posterior_mean,
    quantile_argmax,
    should_expand,
    temperature,
    thompson_argmax,
)
from evolve.search.params import HGMParams
from evolve.search.types import Action, Evaluate, Expand, NodeId, Stop
from evolve.search.view import SearchView


@dataclass(frozen=True)
class HGMPolicy:
    """CMP-guided search: Thompson sampling on clade counts to expand, on own counts to evaluate."""

    params: HGMParams = field(default_factory=HGMParams)
    name: str = "hgm"

    def tau(self, view: SearchView) -> float:
        """`τ = B / max(B − n, 1)` with the cool-down on, else 1 (docs/design.md §Search)."""
        return temperature(view.budget, view.used) if self.params.cooldown else 1.0

    def wants_expansion(self, view: SearchView) -> bool:
        """The widening rule `N^α ≥ |T|` (docs/design.md §Search): N counts evaluations finished and
        in flight, |T| counts nodes and expansions in flight."""
        evaluations = view.used + view.in_flight_evaluations
        tree_size = view.size + len(view.pending_expansions)
        return should_expand(evaluations, tree_size, self.params.alpha)

    def next_action(self, view: SearchView, rng: np.random.Generator) -> Action:
        """Expand or evaluate per the widening rule; each choice by Thompson sampling
        (docs/design.md §Search)."""
        if view.budget_left == 0:
            return Stop("evaluation budget spent")
        expandable = self.expandable(view)
        evaluable = view.valid & (view.tasks_left > 0)
        can_expand, can_evaluate = bool(expandable.any()), bool(evaluable.any())
        if can_expand and (self.wants_expansion(view) or not can_evaluate):
            return Expand(view.ids[self.choose_expansion(view, rng)])
        if can_evaluate:
            node = self.choose_evaluation(view, rng)
            task = view.next_task(node)
            if task is None:  # evaluated sets disagree with task_order: a caller's bug
                raise ValueError(f"node {view.ids[node]!r} has tasks left but no next task")
            return Evaluate(view.ids[node], task)
        if not view.size:
            return Stop("empty tree")
        return Stop("every valid node is evaluated on every task" if view.valid.any() else "no valid node")

    def expandable(self, view: SearchView) -> np.ndarray:
        """The nodes an expansion may grow: the valid ones while expansions are left; with `expand_unfailed`
        off, only those with `expand_failures` failed evaluations or every task finished."""
        if view.expansions_left == 0:
            return np.zeros_like(view.valid)
        if self.params.expand_unfailed:
            return view.valid
        failed = view.failures >= self.params.expand_failures
        return view.valid & (failed | (view.done >= len(view.task_order)))

    def choose_expansion(self, view: SearchView, rng: np.random.Generator) -> int:
        """`argmax θ_a`, `θ_a ~ Beta(τ(1+S(a)), τ(1+F(a)))` over the expandable nodes
        (docs/design.md §Search)."""
        clade_s, clade_f = view.clade_successes, view.clade_failures
        if clade_s is None or clade_f is None:  # SearchView always fills them in; this narrows the type
            raise ValueError("a SearchView without clade counts")
        return thompson_argmax(rng, clade_s, clade_f, self.tau(view), self.expandable(view))

    def choose_evaluation(self, view: SearchView, rng: np.random.Generator) -> int:
        """`argmax θ_a`, `θ_a ~ Beta(τ(1+s(a)), τ(1+f(a)))` over valid nodes with tasks left (§5)."""
        mask = view.valid & (view.tasks_left > 0)
        return thompson_argmax(rng, view.successes, view.failures, self.tau(view), mask)

    def cmp_estimate(self, view: SearchView) -> np.ndarray:
        """HGM's clade-metaproductivity estimate per node: the posterior mean of `Beta(1+S, 1+F)`."""
        return clade_posterior_mean(view.clade_successes, view.clade_failures)

    def best(self, view: SearchView) -> NodeId | None:
        """Best belief: argmax of the ε-quantile of `Beta(1+s, 1+f)` over valid nodes with ≥ k
        evaluations (docs/design.md §Search). With no such node, over valid evaluated nodes; then the first
        valid node; None when there is none."""
        for needed in (self.params.min_evals, 1):
            mask = view.valid & (view.done >= needed)
            if mask.any():
                candidates = np.flatnonzero(mask)
                chosen = quantile_argmax(
                    view.successes[candidates], view.failures[candidates], self.params.epsilon
                )
                return view.ids[int(candidates[chosen])]
        valid = np.flatnonzero(view.valid)
        return view.ids[int(valid[0])] if valid.size else None
