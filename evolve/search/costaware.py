"""HGM with priced expansions: `hgm_cost`, a cost-aware HGM (issue 21).

When an expansion costs C evaluation units (a self-modification takes three model roles and about
4x an evaluation's wall time in the quickstart), HGM's widening rule `N^α ≥ |T|` still counts only
evaluations, so its clock runs slow: with C = 8 most of the units it spends never move it. This
policy runs the widening clock on units: `(N + (C − 1)·E)^α ≥ |T|`, E the expansions made or in
flight (`|T|` minus the roots), which is HGM's rule exactly at C = 1. It also never starts an
expansion whose child could not then get `min_evals` evaluations from the units left (the child
could never be named the final agent, so its price buys nothing). Thompson draws, the cool-down
and the final agent are HGM's; the cool-down runs on units when the view's budget is in units.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from evolve.search.hgm import HGMPolicy
from evolve.search.params import HGMCostParams
from evolve.search.view import SearchView


def unit_clock(evaluations: int, expansions: int, expand_cost: float) -> float:
    """Units spent: `N + C·E` less the `E` an unpriced clock counts, i.e. `N + (C − 1)·E`."""
    return evaluations + (expand_cost - 1.0) * expansions


def affordable(units_left: int, expand_cost: float, min_evals: int) -> bool:
    """An expansion is worth its price only if the child can then get `min_evals` evaluations."""
    return units_left >= expand_cost + min_evals


@dataclass(frozen=True)
class HGMCostPolicy(HGMPolicy):
    """HGM whose widening rule and expansion cut-off account for the price of an expansion."""

    params: HGMCostParams = field(default_factory=HGMCostParams)
    name: str = "hgm_cost"

    def wants_expansion(self, view: SearchView) -> bool:
        evaluations = view.used + view.in_flight_evaluations
        tree_size = view.size + len(view.pending_expansions)
        roots = int((view.parent < 0).sum())
        clock = unit_clock(evaluations, max(tree_size - roots, 0), self.params.expand_cost)
        if not affordable(view.budget_left, self.params.expand_cost, self.params.min_evals):
            return False
        return max(clock, 0.0) ** self.params.alpha >= tree_size
