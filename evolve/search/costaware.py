"""HGM with priced expansions: `hgm_cost`, a cost-aware HGM (issue 21).

When an expansion costs C evaluation units (a self-modification takes three model roles and about
4x an evaluation's wall time in the quickstart), a node costs `C + e` units: its expansion and the
`e` evaluations that tell the search what it bought. HGM's widening rule `N^α ≥ |T|` ignores both
prices, so the share of the budget its tree takes drifts with C. This policy keeps a quota of
evaluations per node instead: it expands iff `(N / e)^α ≥ |T|` (α = 1 by default: one node per `e`
evaluations, so the tree is `B / (C + e)` nodes and shrinks as the price rises), which is HGM's rule
at `e = 1` and HGM's α. And it keeps the last `reserve` share of the units for evaluations only: no
expansion starts once the units left after paying for it would fall below that share, so the final
agent is named on evidence rather than on a child's first results. Thompson draws, the cool-down
and the final agent are HGM's; the cool-down runs on units when the view's budget is in units.
In a run the view's budget counts evaluations only (`[budget] cpu_hours` is the runner's, unseen
here), so "all units" is read as `N + C·E` plus the evaluations left, and the reserve bites somewhat
earlier than `reserve` of the evaluation budget.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from evolve.search.hgm import HGMPolicy
from evolve.search.params import HGMCostParams
from evolve.search.view import SearchView


def widening(evaluations: int, tree_size: int, alpha: float, evals_per_node: float) -> bool:
    """Expand iff `(N / e)^α ≥ |T|`: N evaluations finished and in flight, |T| nodes and expansions in
    flight, e the evaluations each node is due before the tree grows again (HGM's rule at e = 1)."""
    return (evaluations / evals_per_node) ** alpha >= tree_size


def units_spent(evaluations: int, expansions: int, expand_cost: float) -> float:
    """`N + C·E`: what the run has paid so far, an evaluation 1 unit and an expansion C."""
    return evaluations + expand_cost * expansions


def may_expand(units_left: float, spent: float, expand_cost: float, reserve: float, min_evals: int) -> bool:
    """An expansion may start iff, once paid, the units left are still at least the reserve
    (`reserve` of all units, spent plus left) and enough for the child's `min_evals` evaluations."""
    after = units_left - expand_cost
    return after >= reserve * (spent + units_left) and after >= min_evals


@dataclass(frozen=True)
class HGMCostPolicy(HGMPolicy):
    """HGM whose widening rule keeps an evaluation quota per node and a final reserve of units."""

    params: HGMCostParams = field(default_factory=HGMCostParams)
    name: str = "hgm_cost"

    def wants_expansion(self, view: SearchView) -> bool:
        p = self.params
        evaluations = view.used + view.in_flight_evaluations
        tree_size = view.size + len(view.pending_expansions)
        expansions = max(tree_size - int((view.parent < 0).sum()), 0)
        spent = units_spent(evaluations, expansions, p.expand_cost)
        if not may_expand(view.budget_left, spent, p.expand_cost, p.reserve, p.min_evals):
            return False
        return widening(evaluations, tree_size, p.alpha, p.evals_per_node)
