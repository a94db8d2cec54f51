"""The cost-aware HGM (`hgm_cost`): its formulas, and HGM's decisions exactly at C = 1."""

from __future__ import annotations

import numpy as np
import pytest

from evolve.search import HGMCostParams, HGMCostPolicy, HGMPolicy
from evolve.search.costaware import affordable, unit_clock
from evolve.search.estimates import clade_posterior_mean
from evolve.search.simulate import WorldParams, run_episode
from evolve.search.types import Evaluate
from evolve.search.view import SearchView


def test_unit_clock_counts_what_expansions_cost_beyond_one_unit():
    assert unit_clock(100, 10, 1.0) == 100  # C = 1: HGM's N
    assert unit_clock(100, 10, 4.0) == 130  # N + (C - 1) E
    assert unit_clock(0, 3, 8.0) == 21


def test_an_expansion_must_leave_units_for_min_evals():
    assert affordable(9, 4.0, 5) and not affordable(8, 4.0, 5)
    assert affordable(6, 1.0, 5) and not affordable(5, 1.0, 5)


def test_params_refuse_a_price_below_one_unit():
    with pytest.raises(ValueError, match="expand_cost"):
        HGMCostParams(expand_cost=0.5)


def _view(used: int, size: int, budget: int) -> SearchView:
    """A chain of `size` valid nodes, the root with `used` results, 200 tasks."""
    order = tuple(range(200))
    done = [used] + [0] * (size - 1)
    return SearchView(
        ids=tuple(range(size)), parent=[-1] + list(range(size - 1)), valid=[True] * size,
        successes=[d // 2 for d in done], failures=[d - d // 2 for d in done],
        evaluated=[frozenset(range(d)) for d in done], task_order=order, budget=budget, used=used,
    )


def test_widening_rule_runs_on_units():
    # N = 20, |T| = 7, E = 6: HGM's clock 20^0.6 = 6.0 < 7; at C = 4 the clock is 20 + 18 = 38, 38^0.6 = 8.9 >= 7
    view = _view(20, 7, 1000)
    assert not HGMPolicy().wants_expansion(view)
    assert HGMCostPolicy(HGMCostParams(expand_cost=4.0)).wants_expansion(view)
    assert not HGMCostPolicy(HGMCostParams(expand_cost=1.0)).wants_expansion(view)
    # the same tree with too few units left for the child's min_evals: no expansion
    assert not HGMCostPolicy(HGMCostParams(expand_cost=4.0)).wants_expansion(_view(20, 7, 28))
    action = HGMCostPolicy(HGMCostParams(expand_cost=4.0)).next_action(_view(20, 7, 28), np.random.default_rng(0))
    assert isinstance(action, Evaluate)


def test_cmp_estimate_is_the_clade_posterior_mean():
    view = _view(10, 3, 100)
    expected = (1 + view.clade_successes) / (2 + view.clade_successes + view.clade_failures)
    assert HGMCostPolicy().cmp_estimate(view) == pytest.approx(expected)
    assert clade_posterior_mean(view.clade_successes, view.clade_failures) == pytest.approx(expected)


def test_at_one_unit_per_expansion_it_decides_as_hgm_until_the_end():
    # Same seed, same world: identical trees as long as the min_evals cut-off has not bitten.
    hgm = run_episode(HGMPolicy(), WorldParams(n_tasks=30), 150, seed=2, expand_cost=1.0)
    cost = run_episode(HGMCostPolicy(HGMCostParams(expand_cost=1.0)), WorldParams(n_tasks=30), 150, seed=2,
                       expand_cost=1.0)
    assert np.array_equal(hgm.quality_by_evals[:140], cost.quality_by_evals[:140])


def test_it_expands_more_than_hgm_when_expansions_cost_more():
    params = WorldParams(n_tasks=30)
    hgm = run_episode(HGMPolicy(), params, 300, seed=1, expand_cost=8.0, trace=False)
    cost = run_episode(HGMCostPolicy(HGMCostParams(expand_cost=8.0)), params, 300, seed=1, expand_cost=8.0, trace=False)
    assert cost.expansions > hgm.expansions
