"""The cost-aware HGM (`hgm_cost`): its formulas, its budget split, and HGM's decisions when its
parameters are HGM's."""

from __future__ import annotations

import numpy as np
import pytest

from evolve.search import HGMCostParams, HGMCostPolicy, HGMPolicy
from evolve.search.costaware import may_expand, units_spent, widening
from evolve.search.estimates import clade_posterior_mean, should_expand
from evolve.search.simulate import WorldParams, run_episode
from evolve.search.types import Evaluate, Expand
from evolve.search.view import SearchView


def test_widening_keeps_an_evaluation_quota_per_node():
    # (N / e)^alpha >= |T|: with e = 2 and alpha = 1, one node per two evaluations
    assert widening(20, 10, 1.0, 2.0) and not widening(19, 10, 1.0, 2.0)
    assert widening(40, 10, 0.75, 2.0) == (20**0.75 >= 10)  # 9.46 < 10
    assert not widening(40, 10, 0.75, 2.0)
    # e = 1 is HGM's rule N^alpha >= |T|, on both sides of its threshold
    for n, size in [(20, 6), (20, 7), (100, 15), (100, 16), (0, 1), (1, 1)]:
        assert widening(n, size, 0.6, 1.0) == should_expand(n, size, 0.6)


def test_units_spent_prices_each_expansion_at_c():
    assert units_spent(100, 10, 1.0) == 110
    assert units_spent(100, 10, 4.0) == 140
    assert units_spent(0, 3, 8.0) == 24


def test_an_expansion_must_leave_the_reserve_and_the_childs_min_evals():
    # 800 units in all (spent + left): a 10 % reserve is 80 units
    assert may_expand(100, 700, 8.0, 0.1, 5)  # 92 left after paying, >= 80
    assert may_expand(88, 712, 8.0, 0.1, 5)  # exactly 80 left
    assert not may_expand(87, 713, 8.0, 0.1, 5)  # 79 < 80
    # without a reserve, the child's min_evals still bound it
    assert may_expand(13, 787, 8.0, 0.0, 5) and not may_expand(12, 788, 8.0, 0.0, 5)


def test_params_refuse_values_out_of_range():
    for bad in ({"expand_cost": 0.5}, {"evals_per_node": 0.5}, {"reserve": 1.0}, {"reserve": -0.1}):
        with pytest.raises(ValueError, match=next(iter(bad))):
            HGMCostParams(**bad)
    defaults = HGMCostParams()
    assert (defaults.alpha, defaults.evals_per_node, defaults.reserve) == (1.0, 2.0, 0.1)


def _view(used: int, size: int, budget: int) -> SearchView:
    """A chain of `size` valid nodes, the root with `used` results, 200 tasks."""
    order = tuple(range(200))
    done = [used] + [0] * (size - 1)
    return SearchView(
        ids=tuple(range(size)), parent=[-1] + list(range(size - 1)), valid=[True] * size,
        successes=[d // 2 for d in done], failures=[d - d // 2 for d in done],
        evaluated=[frozenset(range(d)) for d in done], task_order=order, budget=budget, used=used,
    )


def test_it_widens_where_hgm_would_not_and_stops_at_the_reserve():
    # N = 20, |T| = 7: HGM's 20^0.6 = 6.03 < 7 evaluates; hgm_cost's 20 / 2 = 10 >= 7 expands
    view = _view(20, 7, 1000)
    policy = HGMCostPolicy(HGMCostParams(expand_cost=4.0))
    assert not HGMPolicy().wants_expansion(view) and policy.wants_expansion(view)
    assert isinstance(policy.next_action(view, np.random.default_rng(0)), Expand)
    # spent 20 + 6 * 4 = 44 units. 24 left (68 in all): paying 4 leaves 20 >= 6.8, so it may;
    # 9 left (53 in all): paying 4 leaves 5, the child's min_evals but under the reserve 5.3: it evaluates
    assert policy.wants_expansion(_view(20, 7, 44))
    assert not policy.wants_expansion(_view(20, 7, 29))
    assert isinstance(policy.next_action(_view(20, 7, 29), np.random.default_rng(0)), Evaluate)


def test_cmp_estimate_is_the_clade_posterior_mean():
    view = _view(10, 3, 100)
    expected = (1 + view.clade_successes) / (2 + view.clade_successes + view.clade_failures)
    assert HGMCostPolicy().cmp_estimate(view) == pytest.approx(expected)
    assert clade_posterior_mean(view.clade_successes, view.clade_failures) == pytest.approx(expected)


def test_with_hgms_parameters_it_decides_as_hgm_until_the_end():
    # alpha 0.6, one evaluation per node, no reserve, C = 1: HGM's rule; the same seed grows the same
    # tree until the min_evals cut-off bites in the last few units
    params = HGMCostParams(alpha=0.6, evals_per_node=1.0, reserve=0.0, expand_cost=1.0)
    hgm = run_episode(HGMPolicy(), WorldParams(n_tasks=30), 150, seed=2, expand_cost=1.0)
    cost = run_episode(HGMCostPolicy(params), WorldParams(n_tasks=30), 150, seed=2, expand_cost=1.0)
    assert np.array_equal(hgm.quality_by_evals[:140], cost.quality_by_evals[:140])


@pytest.mark.parametrize("price", [1.0, 4.0, 8.0])
def test_the_tree_takes_the_budget_less_the_reserve_at_c_plus_e_units_a_node(price):
    budget = 400
    params = HGMCostParams(expand_cost=price)
    result = run_episode(HGMCostPolicy(params), WorldParams(n_tasks=30), budget, seed=1, expand_cost=price,
                         trace=False)
    expected_nodes = 1 + (1 - params.reserve) * budget / (price + params.evals_per_node)
    assert abs(result.nodes - expected_nodes) <= 2
    assert result.units <= budget
    hgm = run_episode(HGMPolicy(), WorldParams(n_tasks=30), budget, seed=1, expand_cost=price, trace=False)
    assert result.expansions > hgm.expansions
