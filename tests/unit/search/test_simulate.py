"""The synthetic world: seeded, with the ground truth its docstring promises."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import expit

from evolve.search import DGMPolicy, GreedyPolicy, HGMPolicy, RandomPolicy
from evolve.search.estimates import clade_counts
from evolve.search.simulate import (
    SyntheticWorld,
    WorldParams,
    compare_policies,
    pearson,
    run_episode,
    true_cmp,
)
from evolve.search.tree import CladeTree


def test_world_is_seeded_and_quality_is_the_mean_pass_probability():
    first = SyntheticWorld(WorldParams(), np.random.default_rng(1))
    second = SyntheticWorld(WorldParams(), np.random.default_rng(1))
    assert np.array_equal(first.difficulty, second.difficulty)
    for _ in range(5):
        assert first.spawn(0) == second.spawn(0)
    assert first.skill == second.skill and first.valid == second.valid
    expected = expit(first.skill[3] - first.difficulty).mean()
    assert first.true_quality(3) == pytest.approx(expected)
    assert first.pass_probability(3, 7) == pytest.approx(expit(first.skill[3] - first.difficulty[7]))


def test_productivity_is_heritable_and_the_step_trades_off_against_it():
    params = WorldParams(productivity_sd=0.2, step_sd=0.4, tradeoff=-0.5, invalid_rate=0.0)
    world = SyntheticWorld(params, np.random.default_rng(0))
    children = [world.spawn(0) for _ in range(4000)]
    steps = np.array([world.skill[c] - world.skill[0] - world.productivity[c] for c in children])
    deltas = np.array([world.productivity[c] for c in children])
    assert np.corrcoef(steps, deltas)[0, 1] == pytest.approx(-0.5, abs=0.05)
    grandchild = world.spawn(children[0])
    assert world.productivity[grandchild] != 0.0
    # a child's productivity is its parent's plus a fresh change: children inherit it on average
    lineage = [0]
    for _ in range(50):
        lineage.append(world.spawn(lineage[-1]))
    parent = lineage[-1]
    offspring = [world.productivity[world.spawn(parent)] for _ in range(2000)]
    assert np.mean(offspring) == pytest.approx(world.productivity[parent], abs=0.02)
    assert abs(world.productivity[parent]) > 0.05  # the lineage has drifted away from the root's 0


def test_evaluations_are_bernoulli_draws_at_the_hidden_rate():
    world = SyntheticWorld(WorldParams(), np.random.default_rng(2))
    rate = np.mean([world.evaluate(0, 4) for _ in range(20_000)])
    assert rate == pytest.approx(world.pass_probability(0, 4), abs=0.015)


def test_incremental_clade_counts_match_the_reverse_pass():
    tree, rng = CladeTree(capacity=4), np.random.default_rng(0)  # small capacity: the columns grow
    tree.add_node(0)
    for i in range(1, 60):
        tree.add_node(i, int(rng.integers(0, i)), valid=bool(rng.random() < 0.8))
    for _ in range(300):
        tree.record(int(rng.integers(0, 60)), int(rng.integers(0, 1000)), bool(rng.random() < 0.5))
    view = tree.view(range(1000), 1000)
    clade_s, clade_f = clade_counts(view.parent, view.successes, view.failures)
    assert (
        clade_s.tolist() == view.clade_successes.tolist() and clade_f.tolist() == view.clade_failures.tolist()
    )
    assert view.used == tree.results == int(view.done.sum())


def test_run_episode_spends_the_budget_and_tracks_the_final_agent():
    result = run_episode(HGMPolicy(), WorldParams(n_tasks=30), budget=120, seed=0)
    assert result.evaluations == 120
    assert result.quality_by_evals.shape == (121,) and not np.isnan(result.quality_by_evals).any()
    assert result.quality_by_evals[-1] == pytest.approx(result.final_quality)
    assert result.best_quality >= result.final_quality
    assert result.nodes >= 2 and result.decisions >= 120


def test_compare_policies_uses_the_same_worlds_for_every_policy():
    results = compare_policies(
        {"hgm": HGMPolicy(), "random": RandomPolicy()}, WorldParams(n_tasks=20), 40, [0, 1]
    )
    # before any evaluation every policy's final agent is the same root of the same world
    for seed in (0, 1):
        assert results["hgm"][seed].quality_by_evals[0] == results["random"][seed].quality_by_evals[0]
    assert results["hgm"][0].quality_by_evals[0] != results["hgm"][1].quality_by_evals[0]


@pytest.mark.parametrize(("policy", "final", "nodes", "decisions", "trajectory"), [
    (HGMPolicy(), 0.20321922431645892, 21, 170, 40.07678635485084),
    (DGMPolicy(), 0.3849623463201514, 10, 159, 56.93997703743848),
    (GreedyPolicy(), 0.4434468560503428, 10, 159, 63.43175761748972),
    (RandomPolicy(), 0.3663224688651793, 10, 159, 54.87095063993657),
], ids=lambda value: getattr(value, "name", ""))  # fmt: skip
def test_episodes_reproduce_the_recorded_reference_seed_for_seed(policy, final, nodes, decisions, trajectory):
    # Recorded before the simulator moved onto the runner's CladeTree: the same world and seed must
    # give the same decisions, tree and final agent. (Since the episode stops where the runner does, on a
    # spent budget without asking the policy, each episode makes one decision fewer: its final Stop.)
    result = run_episode(policy, WorldParams(n_tasks=30), budget=150, seed=4)
    assert (result.nodes, result.decisions) == (nodes, decisions)
    assert result.final_quality == pytest.approx(final, rel=1e-12)
    assert float(result.quality_by_evals.sum()) == pytest.approx(trajectory, rel=1e-12)


@pytest.mark.parametrize("cost", [1.0, 2.0, 8.0])
@pytest.mark.parametrize("policy", [HGMPolicy(), DGMPolicy()], ids=["hgm", "dgm"])
def test_priced_episodes_never_spend_more_units_than_the_budget(policy, cost):
    result = run_episode(policy, WorldParams(n_tasks=30), 200, seed=3, expand_cost=cost, trace=False)
    assert result.units == result.evaluations + cost * result.expansions
    assert result.expansions == result.nodes - 1
    assert result.units <= 200
    assert result.units > 200 - cost - 30  # it stops only when no unit is left or nothing is left to evaluate


def test_a_priced_expansion_leaves_fewer_evaluations():
    free = run_episode(HGMPolicy(), WorldParams(n_tasks=30), 200, seed=3)
    priced = run_episode(HGMPolicy(), WorldParams(n_tasks=30), 200, seed=3, expand_cost=4.0)
    assert free.evaluations == 200 and free.units == 200  # C = 0: expansions are free, as before
    assert priced.evaluations < 200 and priced.expansions > 0


def test_true_cmp_is_the_best_valid_quality_in_the_clade():
    world = SyntheticWorld(WorldParams(invalid_rate=0.0), np.random.default_rng(5))
    a, b = world.spawn(0), world.spawn(0)
    c = world.spawn(a)
    world.valid[c] = False  # an invalid node counts for nothing, not even in its own clade
    truth = true_cmp(world, 4)
    q = [world.true_quality(i) for i in range(4)]
    assert truth[c] == -np.inf
    assert truth[a] == pytest.approx(q[a]) and truth[b] == pytest.approx(q[b])
    assert truth[0] == pytest.approx(max(q[0], q[a], q[b]))


def test_pearson_and_the_policies_estimates():
    assert pearson(np.array([1.0, 2.0, 3.0]), np.array([2.0, 4.0, 6.5])) == pytest.approx(0.9986, abs=1e-3)
    assert np.isnan(pearson(np.array([1.0, 1.0, 1.0]), np.array([1.0, 2.0, 3.0])))
    assert np.isnan(pearson(np.array([1.0, 2.0]), np.array([1.0, 2.0])))
    result = run_episode(HGMPolicy(), WorldParams(n_tasks=30), 200, seed=1)
    assert -1.0 <= result.cmp_correlation <= 1.0

    class NoEstimate(RandomPolicy):
        cmp_estimate = None

    assert np.isnan(run_episode(NoEstimate(), WorldParams(n_tasks=30), 50, seed=1).cmp_correlation)
