"""The cost-aware HGM (`hgm_cost`): its formulas, the price it reads from the view, HGM's decisions where
expansions cost what an evaluation does, and the budget it never overspends."""

from __future__ import annotations

import numpy as np
import pytest

from evolve.search import HGMCostParams, HGMCostPolicy, HGMPolicy
from evolve.search.costaware import keeps_reserve, priced_widening
from evolve.search.estimates import should_expand
from evolve.search.simulate import WorldParams, run_episode
from evolve.search.spend import Spend
from evolve.search.view import SearchView
from evolve.search.worlds import RuggedParams


def test_priced_widening_is_hgms_rule_at_c_1_and_asks_c_to_the_beta_more_evaluations_above():
    for n, size in [(20, 6), (20, 7), (100, 15), (100, 16), (0, 1), (1, 1)]:
        assert priced_widening(n, size, 0.6, 1.0, 1.0) == should_expand(n, size, 0.6)
        assert priced_widening(n, size, 0.6, 0.5, 1.0) == should_expand(n, size, 0.6)  # C < 1 counts as 1
    # C = 4, beta = 1: (N / 4)^alpha; beta = -0.5: (2 N)^alpha
    assert priced_widening(40, 10, 1.0, 4.0, 1.0) and not priced_widening(39, 10, 1.0, 4.0, 1.0)
    assert priced_widening(5, 10, 1.0, 4.0, -0.5) and not priced_widening(4, 10, 1.0, 4.0, -0.5)


def _spend(left: float, limit: float = 800.0, expansion: float = 8.0) -> Spend:
    return Spend("cpu_hours", limit, limit - left, 0.0, 0.0, 1.0, expansion)


def test_the_reserve_grows_with_the_price_and_is_none_at_c_1():
    # 800 units, reserve 0.2, C = 8: keep 0.2 * (1 - 1/8) * 800 = 140 units after paying 8
    assert keeps_reserve(_spend(148.0), 0.2) and not keeps_reserve(_spend(147.9), 0.2)
    assert keeps_reserve(_spend(1.0, expansion=1.0), 0.9)  # C = 1: no reserve, only the price


def test_params_refuse_values_out_of_range_and_set_no_price():
    for bad in ({"price_exponent": 3.0}, {"reserve": 1.0}, {"reserve": -0.1}, {"expand_cost": 4.0}):
        with pytest.raises(ValueError, match=next(iter(bad))):
            HGMCostParams(**bad)


def _view(used: int, size: int, spend: Spend | None) -> SearchView:
    """A chain of `size` valid nodes, the root with `used` results, 200 tasks."""
    done = [used] + [0] * (size - 1)
    return SearchView(
        ids=tuple(range(size)),
        parent=[-1] + list(range(size - 1)),
        valid=[True] * size,
        successes=[d // 2 for d in done],
        failures=[d - d // 2 for d in done],
        evaluated=[frozenset(range(d)) for d in done],
        task_order=tuple(range(200)),
        budget=1000,
        used=used,
        spend=spend,
    )


def test_it_reads_the_measured_price_from_the_view():
    policy = HGMCostPolicy(HGMCostParams(alpha=1.0, price_exponent=1.0, reserve=0.0))
    # N = 20, |T| = 6: at C = 2 (20 / 2 = 10 >= 6) it expands, at C = 4 (5 < 6) it evaluates
    assert policy.wants_expansion(_view(20, 6, _spend(500.0, expansion=2.0)))
    assert not policy.wants_expansion(_view(20, 6, _spend(500.0, expansion=4.0)))
    # no price in the view (an unpriced view, or free expansions): HGM's rule
    for spend in (None, Spend("evaluations", 100, 20, 0, 0, 1.0, 0.0)):
        assert policy.wants_expansion(_view(20, 6, spend)) == HGMPolicy(policy.params).wants_expansion(
            _view(20, 6, None)
        )


def test_where_an_expansion_costs_an_evaluation_it_decides_as_hgm():
    params = HGMCostParams(alpha=0.6)  # HGM's alpha: at C = 1 the rule is HGM's and there is no reserve
    for world in (WorldParams(n_tasks=30),):
        hgm = run_episode(HGMPolicy(), world, 150, seed=2, expand_cost=1.0)
        cost = run_episode(HGMCostPolicy(params), world, 150, seed=2, expand_cost=1.0)
        assert np.array_equal(hgm.quality_by_evals, cost.quality_by_evals) and hgm.nodes == cost.nodes


@pytest.mark.parametrize(
    "world", [WorldParams(n_tasks=30), RuggedParams(n_tasks=30)], ids=["project", "rugged"]
)
@pytest.mark.parametrize("price", [1.0, 4.0, 8.0])
def test_it_never_spends_more_than_one_job_past_the_budget(world, price):
    for policy in (HGMCostPolicy(), HGMPolicy()):
        result = run_episode(policy, world, 300, seed=1, expand_cost=price, trace=False)
        assert result.units <= 300 + result.largest_job
        assert result.units > 300 - 3 * price * 3  # it spends the budget, not stops early
