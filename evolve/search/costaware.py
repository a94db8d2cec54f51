"""HGM that pays for what it spends: `hgm_cost`, a cost-aware HGM.

It reads the view's `spend` (evolve.search.spend): the budget that binds, in its own unit, what is
spent, in flight and reserved, and the measured price of an evaluation and of an expansion, so
`C = expansion price / evaluation price` is the run's own, measured as its jobs finish (no hand-set
price). It departs from HGM in the widening rule only: expand iff `(N / C^β)^α ≥ |T|`. At C = 1 (or
without prices) this is HGM's rule `N^α ≥ |T|`. β < 0 (the default, -0.5: `(√C·N)^α ≥ |T|`) grows
a larger tree than HGM's as expansions get dearer: under HGM's rule a dear expansion shrinks N and
with it the tree, although in both benchmark world families the value is in the lineages
(productivity is heritable) and an evaluation is cheap next to an expansion. β = -1 (the tree HGM
would grow on the evaluations the budget would have bought at C = 1) gains more at C ≤ 4 but spends
so much on expansions at C = 8 that it no longer beats HGM there; -0.5 beats HGM at C = 2, 4 and 8.
β > 0 (a tree that shrinks faster as C rises) and a final reserve of evaluations (`reserve`: no
expansion that leaves less than `reserve · (1 − 1/C)` of the budget) are there to try; both lost to
HGM on the tuning worlds (docs/search.md, "Search that pays for what it spends"). Thompson draws, the
cool-down (on the view's B, which the priced view derives from the binding budget) and the final
agent are HGM's.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from evolve.search.estimates import should_expand
from evolve.search.hgm import HGMPolicy
from evolve.search.params import HGMCostParams
from evolve.search.spend import Spend
from evolve.search.view import SearchView


def priced_widening(
    evaluations: int, tree_size: int, alpha: float, expand_cost: float, exponent: float
) -> bool:
    """Expand iff `(N / C^β)^α ≥ |T|` (C below 1 counts as 1: HGM's rule)."""
    return should_expand(evaluations / max(expand_cost, 1.0) ** exponent, tree_size, alpha)


def keeps_reserve(spend: Spend, reserve: float) -> bool:
    """An expansion may start iff the units left after paying for it stay at least the reserve,
    `reserve · (1 − 1/C)` of the budget."""
    cost = spend.expand_cost
    share = reserve * (1.0 - 1.0 / cost) if cost > 1.0 else 0.0
    return spend.left - spend.expansion_price >= share * spend.limit


@dataclass(frozen=True)
class HGMCostPolicy(HGMPolicy):
    """HGM whose widening rule pays the measured price of an expansion and keeps a final reserve."""

    params: HGMCostParams = field(default_factory=HGMCostParams)
    name: str = "hgm_cost"

    def wants_expansion(self, view: SearchView) -> bool:
        spend = view.spend
        if spend is None or spend.expand_cost <= 0:
            return super().wants_expansion(view)
        if not keeps_reserve(spend, self.params.reserve):
            return False
        evaluations = view.used + view.in_flight_evaluations
        tree_size = view.size + len(view.pending_expansions)
        return priced_widening(
            evaluations, tree_size, self.params.alpha, spend.expand_cost, self.params.price_exponent
        )
