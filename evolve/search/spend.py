"""What the search has spent and what its jobs cost: the budget that binds, in its own unit.

A run has one budget per unit it names (`[budget] evaluations`, `cpu_hours`, `dollars`, `tokens`).
Each budget line knows its limit, what the run has spent in that unit (finished jobs), and what the
run's finished jobs of each kind cost. The price of a job kind is measured online: the mean cost of
the run's finished jobs of that kind, with a prior from the plan worth `PRIOR_WEIGHT` jobs,
`(w·prior + Σ cost) / (w + n)`. The evaluations budget is the exception: it counts results, so an
evaluation costs 1 and an expansion 0 there, by definition.

`priced_view` is the one place a policy's view is priced; the runner (`SearchState.priced_view`) and
the search benchmark (`simulate.run_episode`) both call it. Per line it adds the jobs in flight at
their prices and the evaluations promised after the search (the held-out scoring) at the evaluation
price, and leaves what is left. The line that binds is the one with the fewest evaluations left
(`left / evaluation price`). The view's `budget` B is then the results counted plus the evaluations in
flight plus the evaluations the binding line can still pay, so every policy that reads `budget_left`
stops where the money ends and HGM's cool-down reaches its end value there; `expansions_left` is 0
once some line cannot pay an expansion. `view.spend` carries the binding line for policies that
read prices (`hgm_cost`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from evolve.search.tree import CladeTree
    from evolve.search.view import SearchView

Unit = Literal["evaluations", "cpu_hours", "dollars", "tokens"]
UNITS: tuple[Unit, ...] = ("evaluations", "cpu_hours", "dollars", "tokens")
PRIOR_WEIGHT = 2.0
"""The plan's price counts as this many finished jobs: the first job moves the price two thirds of the way."""
_SLACK = 1e-9


@dataclass(frozen=True)
class KindTotals:
    """What the finished jobs of one kind cost in one unit: how many, and their summed cost."""

    jobs: int = 0
    cost: float = 0.0


def measured_price(prior: float, totals: KindTotals, weight: float = PRIOR_WEIGHT) -> float:
    """`(w·prior + Σ cost) / (w + n)`: the plan's price until jobs finish, then more and more theirs.
    With no prior (0: the plan knows no price in this unit) the run's own mean, 0 before any job."""
    if prior <= 0:
        return totals.cost / totals.jobs if totals.jobs else 0.0
    return (weight * prior + totals.cost) / (weight + totals.jobs)


@dataclass(frozen=True)
class Line:
    """One budget: its unit and limit, the plan's prices, and what the run spent and measured."""

    unit: Unit
    limit: float
    spent: float = 0.0
    """Finished jobs' cost (for `evaluations`: the results counted)."""
    evaluations: KindTotals = KindTotals()
    expansions: KindTotals = KindTotals()
    prior_evaluation: float = 1.0
    """The plan's price of an evaluation in this unit."""
    prior_expansion: float = 0.0
    reserve_jobs: int = 0
    """Evaluations still due after the search (the held-out scoring); none for the evaluations budget,
    which counts search results only."""

    @property
    def evaluation_price(self) -> float:
        if self.unit == "evaluations":
            return 1.0
        return measured_price(self.prior_evaluation, self.evaluations)

    @property
    def expansion_price(self) -> float:
        if self.unit == "evaluations":
            return 0.0
        return measured_price(self.prior_expansion, self.expansions)


@dataclass(frozen=True)
class Spend:
    """The binding budget as a policy sees it, every figure in `unit`."""

    unit: Unit
    limit: float
    spent: float
    """Finished jobs (evaluations and expansions, search and held-out)."""
    in_flight: float
    """Jobs in flight, each at its kind's price."""
    reserve: float
    """Held-out evaluations still due after the search, at the evaluation price."""
    evaluation_price: float
    expansion_price: float
    evaluations_measured: int = 0
    expansions_measured: int = 0

    @property
    def left(self) -> float:
        """What new jobs may still spend: the limit less spent, in flight and reserved."""
        return max(self.limit - self.spent - self.in_flight - self.reserve, 0.0)

    @property
    def evaluations_left(self) -> int:
        """Whole evaluations `left` pays for."""
        if self.evaluation_price <= 0:
            return 0 if self.left <= 0 else 2**31
        return math.floor(self.left / self.evaluation_price + _SLACK)

    @property
    def expand_cost(self) -> float:
        """An expansion's price in evaluations (C); 0 where expansions are free in this unit."""
        return self.expansion_price / self.evaluation_price if self.evaluation_price > 0 else 0.0

    @property
    def committed(self) -> float:
        return self.spent + self.in_flight + self.reserve

    def can_pay_expansion(self) -> bool:
        return self.left + _SLACK * max(self.limit, 1.0) >= self.expansion_price

    def to_json(self) -> dict:
        return {
            "unit": self.unit,
            "limit": self.limit,
            "spent": self.spent,
            "in_flight": self.in_flight,
            "reserve": self.reserve,
            "evaluation_price": self.evaluation_price,
            "expansion_price": self.expansion_price,
            "evaluations_measured": self.evaluations_measured,
            "expansions_measured": self.expansions_measured,
        }


def spend_of(line: Line, evaluations_in_flight: int, expansions_in_flight: int) -> Spend:
    """A line with the jobs in flight and the reserve priced."""
    evaluation, expansion = line.evaluation_price, line.expansion_price
    return Spend(
        unit=line.unit,
        limit=line.limit,
        spent=line.spent,
        in_flight=evaluations_in_flight * evaluation + expansions_in_flight * expansion,
        reserve=line.reserve_jobs * evaluation,
        evaluation_price=evaluation,
        expansion_price=expansion,
        evaluations_measured=line.evaluations.jobs,
        expansions_measured=line.expansions.jobs,
    )


def binding(spends: Sequence[Spend]) -> Spend:
    """The line with the fewest evaluations left (the first of equals: the evaluations budget first)."""
    if not spends:
        raise ValueError("a run has at least its evaluations budget")
    return min(spends, key=lambda s: (s.evaluations_left, s.left / max(s.limit, _SLACK)))


@dataclass(frozen=True)
class PricedBudget:
    """What `priced_view` derives from the lines for the jobs in flight now."""

    spends: tuple[Spend, ...] = field(default=())

    @property
    def binds(self) -> Spend:
        return binding(self.spends)

    @property
    def evaluations_left(self) -> int:
        return min(s.evaluations_left for s in self.spends)

    @property
    def expansions_affordable(self) -> bool:
        return all(s.can_pay_expansion() for s in self.spends)


def price(lines: Iterable[Line], evaluations_in_flight: int, expansions_in_flight: int) -> PricedBudget:
    return PricedBudget(tuple(spend_of(line, evaluations_in_flight, expansions_in_flight) for line in lines))


def spent_out(lines: Iterable[Line]) -> bool:
    """A budget is spent: no new job starts (the runner's stop, whatever the policy would do)."""
    return any(line.spent >= line.limit for line in lines)


def priced_view(
    tree: CladeTree,
    task_order: Sequence,
    lines: Sequence[Line],
    pending_evaluations: Sequence[tuple] = (),
    pending_expansions: Sequence = (),
    expansions_left: int | None = None,
) -> SearchView:
    """The policy's view of `tree` under the budget `lines` (see the module's docstring)."""
    pending_evaluations, pending_expansions = list(pending_evaluations), list(pending_expansions)
    priced = price(lines, len(pending_evaluations), len(pending_expansions))
    budget = tree.results + len(pending_evaluations) + priced.evaluations_left
    if not priced.expansions_affordable:
        expansions_left = 0
    return tree.view(
        task_order,
        budget,
        pending_evaluations=pending_evaluations,
        pending_expansions=pending_expansions,
        expansions_left=expansions_left,
        spend=priced.binds,
    )
