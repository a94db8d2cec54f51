"""Policy behaviour: hand-made decisions and the invariants every policy keeps."""

from __future__ import annotations

import numpy as np
import pytest

from evolve.search import (
    DGMParams,
    DGMPolicy,
    Evaluate,
    Expand,
    GEAPolicy,
    GreedyPolicy,
    HGMCostPolicy,
    HGMParams,
    HGMPolicy,
    Policy,
    RandomPolicy,
    SearchView,
    Stop,
)
from evolve.search.dgm import dgm_parent_probabilities
from evolve.search.simulate import WorldParams, run_episode
from evolve.search.staged import archive_members, evaluation_due

ALL = [HGMPolicy(), DGMPolicy(), GreedyPolicy(), RandomPolicy(), HGMCostPolicy(), GEAPolicy()]


@pytest.mark.parametrize("policy", ALL, ids=lambda p: p.name)
def test_protocol_and_empty_tree(policy):
    assert isinstance(policy, Policy)
    view = SearchView(ids=(), parent=[], valid=[], successes=[], failures=[], evaluated=[],
                      task_order=range(5), budget=10, used=0)  # fmt: skip
    assert isinstance(policy.next_action(view, np.random.default_rng(0)), Stop)
    assert policy.best(view) is None


@pytest.mark.parametrize("policy", ALL, ids=lambda p: p.name)
def test_all_evaluated_tree_expands_a_valid_node(policy, make_view):
    view = make_view([-1, 0, 0], [3, 4, 1], [2, 1, 4], valid=[True, True, False], n_tasks=5)
    for seed in range(20):
        action = policy.next_action(view, np.random.default_rng(seed))
        assert isinstance(action, Expand) and action.node in {"n0", "n1"}
    assert policy.best(view) in {"n0", "n1"}


@pytest.mark.parametrize("policy", ALL, ids=lambda p: p.name)
def test_all_evaluated_tree_of_invalid_nodes_stops(policy, make_view):
    view = make_view([-1], [0], [0], valid=[False])
    assert isinstance(policy.next_action(view, np.random.default_rng(0)), Stop)
    assert policy.best(view) is None


@pytest.mark.parametrize("policy", ALL, ids=lambda p: p.name)
def test_stops_at_the_budget_counting_evaluations_in_flight(policy, make_view):
    view = make_view([-1, 0], [2, 1], [1, 1], budget=6, pending_evaluations=[(1, 2)])
    assert isinstance(policy.next_action(view, np.random.default_rng(0)), Stop)
    view = make_view([-1, 0], [2, 1], [1, 1], budget=7, pending_evaluations=[(1, 2)])
    assert not isinstance(policy.next_action(view, np.random.default_rng(0)), Stop)


@pytest.mark.parametrize("policy", ALL, ids=lambda p: p.name)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_invariants_over_a_whole_episode(policy, seed):
    """Driven on a synthetic world: never an invalid node, never a task twice, exactly B evaluations."""
    seen: set[tuple[object, object]] = set()

    class Checking:
        name = policy.name

        def next_action(self, view, rng):
            action = policy.next_action(view, rng)
            if isinstance(action, (Expand, Evaluate)):
                assert view.valid[view.index[action.node]], "picked an invalid node"
            if isinstance(action, Evaluate):
                assert action.task in view.task_order
                assert (action.node, action.task) not in seen, "evaluated a task twice"
                seen.add((action.node, action.task))
            if isinstance(action, Stop):
                assert view.used == view.budget
            return action

        def best(self, view):
            chosen = policy.best(view)
            assert chosen is None or view.valid[view.index[chosen]]
            return chosen

    result = run_episode(Checking(), WorldParams(n_tasks=30, invalid_rate=0.4), budget=150, seed=seed)
    assert result.evaluations == 150 == len(seen)


def test_hgm_widening_decides_expand_or_evaluate(make_view):
    policy, rng = HGMPolicy(), np.random.default_rng(0)
    assert isinstance(policy.next_action(make_view([-1], [0], [0]), rng), Evaluate)  # 0^0.6 < 1
    assert isinstance(policy.next_action(make_view([-1], [1], [0]), rng), Expand)  # 1 >= 1
    # 4 evaluations, 2 nodes + 1 pending expansion: 2.30 < 3 -> evaluate
    view = make_view([-1, 0], [2, 0], [1, 1], pending_expansions=[0])
    assert isinstance(policy.next_action(view, rng), Evaluate)
    # an evaluation in flight counts toward N: 5 + 1 = 6 -> 6^0.6 = 2.93 < 3 -> still evaluate
    view = make_view([-1, 0], [2, 1], [1, 1], pending_expansions=[0], pending_evaluations=[(0, 3)])
    assert isinstance(policy.next_action(view, rng), Evaluate)


def test_with_no_expansion_left_policies_only_evaluate(make_view):
    rng = np.random.default_rng(0)
    assert isinstance(HGMPolicy().next_action(make_view([-1], [1], [0], expansions_left=0), rng), Evaluate)
    done = make_view([-1], [2], [1], n_tasks=3, expansions_left=0)
    assert HGMPolicy().next_action(done, rng) == Stop("every valid node is evaluated on every task")
    stop = DGMPolicy().next_action(done, rng)
    assert isinstance(stop, Stop) and "expansion budget" in stop.reason


def test_hgm_evaluates_next_task_in_run_order_skipping_in_flight(make_view):
    view = make_view([-1], [2], [1], pending_evaluations=[(0, 3)], pending_expansions=[0, 0])
    action = HGMPolicy().next_action(view, np.random.default_rng(0))
    assert action == Evaluate("n0", 4)


def test_hgm_expansion_follows_the_clade_not_the_node(make_view):
    # n1 scores badly itself, but its child n3 is excellent: n1's clade is the better bet
    # (own: n0 2/20, n1 0/20, n2 4/20, n3 60/60; clades: n0 66/120, n1 60/80, n2 4/20)
    view = make_view([-1, 0, 0, 1], [2, 0, 4, 60], [18, 20, 16, 0], valid=[True, True, True, False],
                     n_tasks=60)  # fmt: skip
    picks = [HGMPolicy(HGMParams(cooldown=False)).choose_expansion(view, np.random.default_rng(i))
             for i in range(200)]  # fmt: skip
    assert set(picks) <= {0, 1, 2}  # n3 is invalid
    assert picks.count(1) > 190


def test_hgm_without_expand_unfailed_grows_only_nodes_with_a_failure_to_diagnose(make_view):
    # n1 passed its 3 tasks and its clade is the better bet; n2 is new. With the paper's rule n1 is
    # expanded; without it, only n0 (it failed) may be, and n1 or n2 is evaluated further when it is not.
    view = make_view([-1, 0, 0], [1, 3, 0], [3, 0, 0], n_tasks=6, budget=40)
    paper, diagnosable = (
        HGMPolicy(HGMParams(cooldown=False)),
        HGMPolicy(HGMParams(cooldown=False, expand_unfailed=False)),
    )
    assert list(paper.expandable(view)) == [True, True, True]
    assert list(diagnosable.expandable(view)) == [True, False, False]
    assert {diagnosable.choose_expansion(view, np.random.default_rng(i)) for i in range(50)} == {0}
    assert {paper.choose_expansion(view, np.random.default_rng(i)) for i in range(50)} > {0}
    only_unfailed = make_view([-1, 0], [2, 2], [0, 0], n_tasks=6)
    actions = {diagnosable.next_action(only_unfailed, np.random.default_rng(i)) for i in range(20)}
    assert actions and all(isinstance(a, Evaluate) for a in actions)
    finished = make_view([-1], [6], [0], n_tasks=6)  # every task passed: nothing left but to expand it
    assert diagnosable.next_action(finished, np.random.default_rng(0)) == Expand("n0")


def test_hgm_with_expand_failures_waits_for_as_many_failures_to_contrast(make_view):
    # n0 failed 1 of its 2 tasks so far, n1 failed 2 of 3: asked for 2 failures, only n1 may be expanded,
    # and a node with a single failure is evaluated further while it has tasks left
    view = make_view([-1, 0], [1, 1], [1, 2], n_tasks=6, budget=40)
    two = HGMPolicy(HGMParams(cooldown=False, expand_unfailed=False, expand_failures=2))
    assert list(two.expandable(view)) == [False, True]
    assert list(HGMPolicy(HGMParams(cooldown=False, expand_unfailed=False)).expandable(view)) == [True, True]
    one_failure = make_view([-1], [1], [1], n_tasks=6)
    actions = {two.next_action(one_failure, np.random.default_rng(i)) for i in range(20)}
    assert actions and all(isinstance(a, Evaluate) for a in actions)
    finished = make_view([-1], [5], [1], n_tasks=6)  # every task done with one failure: expanded all the same
    assert two.next_action(finished, np.random.default_rng(0)) == Expand("n0")
    with pytest.raises(ValueError, match="expand_failures"):
        HGMParams(expand_failures=0)


def test_hgm_evaluation_uses_own_counts_among_nodes_with_tasks_left(make_view):
    view = make_view([-1, 0, 0], [5, 2, 1], [0, 2, 1], n_tasks=5)  # n0 finished every task
    picks = {HGMPolicy().choose_evaluation(view, np.random.default_rng(i)) for i in range(100)}
    assert picks == {1, 2}


def test_hgm_best_is_the_quantile_choice_among_nodes_with_enough_evaluations(make_view):
    # n1: 4/4 (too few), n2: 9/10 (q25 ~ 0.80), n3: 60/70 (mean 0.857, q25 ~ 0.83)
    view = make_view([-1, 0, 0, 0], [1, 4, 9, 60], [9, 0, 1, 10], n_tasks=100, budget=1000)
    assert HGMPolicy().best(view) == "n3"
    assert HGMPolicy(HGMParams(min_evals=4, epsilon=0.25)).best(view) == "n3"
    assert HGMPolicy(HGMParams(min_evals=1, epsilon=0.9)).best(view) == "n1"  # optimistic quantile
    # nothing with 5 evaluations: fall back to evaluated nodes, then to the first valid node
    assert HGMPolicy().best(make_view([-1, 0], [0, 2], [1, 0])) == "n1"
    assert HGMPolicy().best(make_view([-1, 0], [0, 0], [0, 0], valid=[False, True])) == "n1"


def test_dgm_parent_probabilities_on_a_small_archive(make_view):
    # accuracies 0.5 (2 valid children), 0.6 (1 valid child, 1 invalid), 1.0 (excluded), 0.3 (none);
    # n4 is invalid and n5 has only 5 evaluations (stage 1 unfinished): neither is a member
    view = make_view([-1, 0, 0, 1, 1, 3], [5, 6, 10, 3, 1, 5], [5, 4, 0, 7, 4, 0],
                     valid=[True, True, True, True, False, True])  # fmt: skip
    members = archive_members(view, DGMParams().staged)
    assert members.tolist() == [True, True, True, True, False, False]
    p = dgm_parent_probabilities(view, members, DGMParams())
    raw = np.array([0.5 / 3, 1 / (1 + np.exp(-1.0)) / 2, 0.0, 1 / (1 + np.exp(2.0)) / 2, 0.0, 0.0])
    assert p == pytest.approx(raw / raw.sum())


def test_staged_evaluation_gates(make_view):
    params = DGMParams().staged
    # n0: in stage 1; n1: stage 1 done at 40 % -> stage 2; n2: 30 % -> stops;
    # n3: stage 2 done, best -> rest; n4: stage 2 done, third -> stops; n5: in stage 2 -> continue
    s = [3, 4, 3, 50, 40, 8]
    f = [2, 6, 7, 10, 20, 7]
    view = make_view([-1, 0, 0, 0, 0, 0], s, f, n_tasks=100, budget=10_000)
    extra = make_view([-1, 0, 0, 0, 0, 0, 0], s + [45], f + [15], n_tasks=100, budget=10_000)
    assert evaluation_due(view, params).tolist() == [True, True, False, True, True, True]
    # with a third node at 75 %, n4 (67 %) is no longer among the top two
    assert evaluation_due(extra, params).tolist() == [True, True, False, True, False, True, True]
    # a gate is not passed while a stage-1 evaluation is still in flight
    pending = make_view([-1], [4], [5], pending_evaluations=[(0, 9)], n_tasks=100)
    assert evaluation_due(pending, params).tolist() == [False]


def test_staged_policies_evaluate_the_oldest_due_node_first(make_view):
    view = make_view([-1, 0, 0], [5, 1, 0], [5, 1, 0], n_tasks=100)
    for policy in (DGMPolicy(), GreedyPolicy(), RandomPolicy()):
        assert policy.next_action(view, np.random.default_rng(0)) == Evaluate("n0", 10)


def test_greedy_expands_the_best_mean_and_random_any_member(make_view):
    view = make_view([-1, 0, 0, 0], [3, 7, 5, 9], [7, 3, 5, 0], valid=[True, True, True, False], n_tasks=10)
    greedy = {GreedyPolicy().next_action(view, np.random.default_rng(i)).node for i in range(30)}
    uniform = {RandomPolicy().next_action(view, np.random.default_rng(i)).node for i in range(60)}
    assert greedy == {"n1"}
    assert uniform == {"n0", "n1", "n2"}


def test_dgm_best_is_the_best_mean_over_fully_evaluated_nodes(make_view):
    # n1 has the best mean but is not fully evaluated
    view = make_view([-1, 0, 0], [5, 10, 7], [5, 0, 3], n_tasks=10)
    partial = make_view([-1, 0, 0], [5, 9, 7], [5, 0, 3], n_tasks=10)
    assert DGMPolicy().best(view) == "n1"
    assert DGMPolicy().best(partial) == "n2"


def test_dgm_stops_when_every_member_solved_everything(make_view):
    view = make_view([-1], [10], [0], n_tasks=10)
    assert isinstance(DGMPolicy().next_action(view, np.random.default_rng(0)), Stop)


@pytest.mark.parametrize("policy", ALL, ids=lambda p: p.name)
def test_same_seed_same_decisions(policy):
    first = run_episode(policy, WorldParams(n_tasks=30), budget=100, seed=4)
    second = run_episode(policy, WorldParams(n_tasks=30), budget=100, seed=4)
    assert first.final_quality == second.final_quality
    assert np.array_equal(first.quality_by_evals, second.quality_by_evals)
