"""The docs/design.md §Search formulas on small hand-computed cases, and the aliasing regression."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import beta

from evolve.search import HGMPolicy
from evolve.search.estimates import (
    beta_quantile,
    clade_counts,
    dgm_parent_weights,
    mean_accuracy,
    should_expand,
    temperature,
    thompson_argmax,
)

# root 0 with children 1 and 2; 3 is a child of 1; 4 a child of 3
PARENT = [-1, 0, 0, 1, 3]
OWN_S = [1, 2, 0, 3, 1]
OWN_F = [4, 1, 2, 0, 5]


def test_clade_counts_sum_over_node_and_descendants():
    clade_s, clade_f = clade_counts(PARENT, np.array(OWN_S), np.array(OWN_F))
    assert clade_s.tolist() == [7, 6, 0, 4, 1]
    assert clade_f.tolist() == [12, 6, 2, 5, 5]


def test_clade_counts_with_two_roots_and_a_leaf_only_tree():
    clade_s, clade_f = clade_counts([-1, -1, 0, 1], np.array([1, 1, 1, 1]), np.array([0, 2, 0, 3]))
    assert clade_s.tolist() == [2, 2, 1, 1]
    assert clade_f.tolist() == [0, 5, 0, 3]
    empty_s, empty_f = clade_counts([], np.array([], dtype=int), np.array([], dtype=int))
    assert empty_s.size == 0 and empty_f.size == 0


def _assert_clade_estimates_leave_own_counts_alone(estimate, own_results, repeats=100):
    """The regression check: estimating clades `repeats` times must not change any node's own
    recorded results, and must give the same estimate every time."""
    before = {node: list(results) for node, results in own_results.items()}
    first = estimate()
    for _ in range(repeats - 1):
        assert estimate() == first
    assert {node: list(results) for node, results in own_results.items()} == before


def test_clade_estimate_never_changes_own_results(make_view):
    """Regression for the public HGM code, which extends a node's own result list with its
    descendants' on every estimate, so its counts grow each time they are read."""
    own_s, own_f = np.array(OWN_S), np.array(OWN_F)
    own = {"s": own_s, "f": own_f}
    view = make_view(PARENT, OWN_S, OWN_F)
    policy, rng = HGMPolicy(), np.random.default_rng(0)

    def estimate():
        clade_s, clade_f = clade_counts(PARENT, own_s, own_f)
        policy.choose_expansion(view, rng)
        return clade_s.tolist(), clade_f.tolist(), view.clade_successes.tolist()

    _assert_clade_estimates_leave_own_counts_alone(estimate, own)
    assert view.successes.tolist() == OWN_S and view.failures.tolist() == OWN_F
    assert view.clade_successes[0] == sum(OWN_S)  # the root's clade is every result, once


def test_the_regression_check_catches_the_public_hgm_aliasing_bug():
    """The same check fails on an estimate written the way the public HGM code writes it."""
    children = {0: [1, 2], 1: [3], 2: [], 3: [4], 4: []}
    results = {i: [1] * s + [0] * f for i, (s, f) in enumerate(zip(OWN_S, OWN_F, strict=True))}

    def aliasing_estimate():
        def clade(node):
            collected = results[node]  # aliases the node's own list ...
            for child in children[node]:
                collected.extend(clade(child))  # ... and extends it in place
            return collected

        everything = clade(0)
        return sum(everything), len(everything) - sum(everything)

    with pytest.raises(AssertionError):
        _assert_clade_estimates_leave_own_counts_alone(aliasing_estimate, results)


@pytest.mark.parametrize(
    ("evaluations", "tree_size", "expected"),
    [(0, 1, False), (1, 1, True), (1, 2, False), (3, 2, False), (4, 2, True), (800, 55, True),
     (800, 56, False)],
)  # fmt: skip
def test_widening_rule(evaluations, tree_size, expected):
    # 3^0.6 = 1.93, 4^0.6 = 2.30, 800^0.6 = 55.4
    assert should_expand(evaluations, tree_size, 0.6) is expected


@pytest.mark.parametrize(
    ("budget", "used", "tau"), [(800, 0, 1.0), (800, 400, 2.0), (800, 700, 8.0), (800, 799, 800.0),
                                (800, 800, 800.0), (800, 900, 800.0), (10, 5, 2.0)],
)  # fmt: skip
def test_temperature(budget, used, tau):
    assert temperature(budget, used) == pytest.approx(tau)


def test_beta_quantile_matches_scipy_and_prefers_the_surer_node():
    s, f = np.array([4, 40, 0]), np.array([1, 10, 0])
    quantiles = beta_quantile(s, f, 0.25)
    assert quantiles == pytest.approx([beta.ppf(0.25, 5, 2), beta.ppf(0.25, 41, 11), 0.25])
    # 4/5 = 0.8 and 40/50 = 0.8 have the same mean; the 25 % quantile prefers more evidence
    assert quantiles[1] > quantiles[0]


def test_dgm_parent_weights_hand_computed():
    accuracy = np.array([0.5, 0.6, 1.0, 0.3])
    children = np.array([0, 1, 0, 2])
    raw = np.array([0.5, 1 / (1 + np.exp(-1.0)) / 2, 0.0, 1 / (1 + np.exp(2.0)) / 3])
    assert dgm_parent_weights(accuracy, children, 10.0, 0.5) == pytest.approx(raw / raw.sum())


def test_dgm_parent_weights_all_excluded_are_zero():
    assert dgm_parent_weights(np.array([1.0, 1.0]), np.array([0, 0]), 10.0, 0.5).tolist() == [0, 0]


def test_mean_accuracy_is_zero_without_evaluations():
    assert mean_accuracy(np.array([3, 0]), np.array([1, 0])).tolist() == [0.75, 0.0]


def test_thompson_argmax_respects_the_mask_and_the_rng():
    s, f = np.array([100, 0, 0]), np.array([0, 0, 100])
    mask = np.array([False, True, True])
    picks = {thompson_argmax(np.random.default_rng(seed), s, f, 1.0, mask) for seed in range(50)}
    assert picks <= {1, 2} and 1 in picks
    assert thompson_argmax(np.random.default_rng(3), s, f, 1.0, mask) == thompson_argmax(
        np.random.default_rng(3), s, f, 1.0, mask
    )
    with pytest.raises(ValueError):
        thompson_argmax(np.random.default_rng(0), s, f, 1.0, np.zeros(3, dtype=bool))


def test_thompson_with_a_high_temperature_becomes_greedy():
    # means 0.55 vs 0.45 on 20 evaluations each: at tau = 1 both win often, at tau = 800 only the first
    s, f, mask = np.array([11, 9]), np.array([9, 11]), np.array([True, True])
    cold = [thompson_argmax(np.random.default_rng(i), s, f, 800.0, mask) for i in range(200)]
    warm = [thompson_argmax(np.random.default_rng(i), s, f, 1.0, mask) for i in range(200)]
    assert set(cold) == {0} and set(warm) == {0, 1}


def test_quantile_argmax_is_the_argmax_of_every_quantile_first_on_ties():
    from evolve.search.estimates import beta_quantile, quantile_argmax

    for seed in range(400):
        rng = np.random.default_rng(seed)
        size, top = int(rng.integers(1, 60)), int(rng.integers(1, 12))
        successes, failures = rng.integers(0, top, size), rng.integers(0, top, size)
        if seed % 3 == 0:  # many repeated (s, f) pairs: the first must win
            successes, failures = (
                np.repeat(successes[: size // 4 + 1], 4)[:size],
                np.repeat(failures[: size // 4 + 1], 4)[:size],
            )
        epsilon = float(rng.choice([0.05, 0.25, 0.5, 0.9]))
        expected = int(np.argmax(beta_quantile(successes, failures, epsilon)))
        assert quantile_argmax(successes, failures, epsilon) == expected, seed
