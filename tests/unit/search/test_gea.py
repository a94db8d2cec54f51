"""GEA's selection formulas on hand-computed cases (arXiv 2602.04837; evolve.search.gea)."""

from __future__ import annotations

import numpy as np
import pytest

from evolve.search import Evaluate, ExpandGroup, GEAParams, GEAPolicy, SearchView, Stop
from evolve.search.gea import (
    combined_score,
    cosine_distances,
    group_scores,
    novelty,
    novelty_of,
    parent_group,
    probe_tasks,
    success_vectors,
    top_k,
)
from evolve.search.simulate import WorldParams, run_episode

# Four agents, all evaluated on the 4 tasks (one stage of 4, so the probes are all 4 tasks):
# a passes {0,1}, b {0,2}, c {2,3}, d {0,1,2}.
SOLVED = {"a": {0, 1}, "b": {0, 2}, "c": {2, 3}, "d": {0, 1, 2}}
PARAMS = GEAParams(stages=(4,), group_size=2, neighbours=2)
R2, R3 = np.sqrt(2), np.sqrt(3)
# d(i, j) = 1 - z_i.z_j / (|z_i||z_j|): by hand
D_AB, D_AC, D_AD = 1 - 1 / 2, 1 - 0 / 2, 1 - 2 / (R2 * R3)
D_BC, D_BD, D_CD = 1 - 1 / 2, 1 - 2 / (R2 * R3), 1 - 1 / (R2 * R3)


def four_agents(**overrides) -> SearchView:
    ids = ("a", "b", "c", "d")
    fields = {
        "ids": ids,
        "parent": [-1, 0, 0, 0],
        "valid": [True] * 4,
        "successes": [len(SOLVED[i]) for i in ids],
        "failures": [4 - len(SOLVED[i]) for i in ids],
        "evaluated": [frozenset(range(4))] * 4,
        "task_order": (0, 1, 2, 3),
        "budget": 100,
        "used": 16,
        "solved": [frozenset(SOLVED[i]) for i in ids],
    }
    return SearchView(**{**fields, **overrides})


def test_success_vectors_are_the_graded_outcomes_on_the_probe_tasks():
    view = four_agents()
    assert probe_tasks(view, PARAMS) == (0, 1, 2, 3)
    assert probe_tasks(view, GEAParams(stages=(2, 10))) == (0, 1)
    z = success_vectors(view, np.arange(4), probe_tasks(view, PARAMS))
    assert z.tolist() == [[1, 1, 0, 0], [1, 0, 1, 0], [0, 0, 1, 1], [1, 1, 1, 0]]


def test_cosine_distance_by_hand():
    view = four_agents()
    d = cosine_distances(success_vectors(view, np.arange(4), (0, 1, 2, 3)), 1e-12)
    expected = np.array(
        [[0, D_AB, D_AC, D_AD], [D_AB, 0, D_BC, D_BD], [D_AC, D_BC, 0, D_CD], [D_AD, D_BD, D_CD, 0]]
    )
    assert np.allclose(d, expected)
    # an all-fail agent is at distance 1 from everyone (the ε keeps 0/0 away), itself included
    zero = cosine_distances(np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 0.0]]), 1e-8)
    assert np.allclose(zero[0], [1, 1, 1])


def test_novelty_is_the_mean_distance_to_the_m_nearest_others():
    d = np.array([[0, D_AB, D_AC, D_AD], [D_AB, 0, D_BC, D_BD], [D_AC, D_BC, 0, D_CD], [D_AD, D_BD, D_CD, 0]])
    assert np.allclose(novelty(d, 1), [D_AD, D_BD, D_BC, D_AD])
    assert np.allclose(
        novelty(d, 2), [(D_AD + D_AB) / 2, (D_BD + D_AB) / 2, (D_BC + D_CD) / 2, (D_AD + D_BD) / 2]
    )
    assert np.allclose(
        novelty(d, 10),
        [
            (D_AB + D_AC + D_AD) / 3,
            (D_AB + D_BC + D_BD) / 3,
            # fewer than M: all
            (D_AC + D_BC + D_CD) / 3,
            (D_AD + D_BD + D_CD) / 3,
        ],
    )
    assert novelty(np.zeros((1, 1)), 4).tolist() == [1.0]  # an agent alone: nothing is like it


@pytest.mark.parametrize("probes", [3, 12])
def test_novelty_over_distinct_vectors_equals_the_whole_matrix(probes):
    z = (np.random.default_rng(3).random((300, probes)) < 0.4).astype(float)  # 3 probes: many agents alike
    z[:4] = 0.0  # all-fail agents too
    whole = novelty(cosine_distances(z, 1e-8), 4)
    assert np.allclose(novelty_of(z, 4, 1e-8, rows=5), whole)
    assert novelty_of(z[:1], 4, 1e-8).tolist() == [1.0]


def test_combined_score_is_accuracy_times_novelty_and_prefers_the_novel_over_the_best():
    scores = group_scores(four_agents(), PARAMS)
    nov = [(D_AD + D_AB) / 2, (D_BD + D_AB) / 2, (D_BC + D_CD) / 2, (D_AD + D_BD) / 2]
    assert np.allclose(scores.accuracy, [0.5, 0.5, 0.5, 0.75])
    assert np.allclose(scores.novelty, nov)
    assert np.allclose(scores.score, [0.5 * nov[0], 0.5 * nov[1], 0.5 * nov[2], 0.75 * nov[3]])
    assert np.allclose(combined_score([0.2, 1.0], [0.5, 0.0]), [0.1, 0.0])
    # d has the best accuracy but sits amid a and b: c (score .273) leads, then a or b (.171), d last (.138)
    assert int(np.argmax(scores.score)) == 2 and int(np.argmin(scores.score)) == 3


def test_group_is_the_top_k_with_ties_drawn_from_the_generator():
    firsts, seconds = set(), set()
    for seed in range(30):
        group = parent_group(four_agents(), PARAMS, np.random.default_rng(seed))
        firsts.add(group[0])
        seconds.add(group[1])
    assert firsts == {2} and seconds == {0, 1}  # c; then a and b tie exactly
    assert parent_group(
        four_agents(), GEAParams(stages=(4,), group_size=1, neighbours=2), np.random.default_rng(0)
    ) == (2,)
    assert top_k(np.array([0.1, 0.4, 0.3]), 2, np.random.default_rng(0)).tolist() == [1, 2]


def test_policy_expands_the_group_as_one_action():
    action = GEAPolicy(PARAMS).next_action(four_agents(), np.random.default_rng(0))
    assert isinstance(action, ExpandGroup)
    assert action.node == "c" and action.parents[0] == "c" and action.parents[1] in {"a", "b"}
    assert len(action.parents) == 2


def test_group_is_capped_by_the_expansions_left_and_members_need_their_probes():
    one = GEAPolicy(PARAMS).next_action(four_agents(expansions_left=1), np.random.default_rng(0))
    assert isinstance(one, ExpandGroup) and one.parents == ("c",)
    # c is missing a probe result: it is due for evaluation first
    view = four_agents(
        successes=[2, 2, 1, 3],
        failures=[2, 2, 1, 1],
        evaluated=[frozenset(range(4))] * 2 + [frozenset({2, 3}), frozenset(range(4))],
        solved=[frozenset(SOLVED[i]) for i in "ab"] + [frozenset({2}), frozenset(SOLVED["d"])],
    )
    assert GEAPolicy(PARAMS).next_action(view, np.random.default_rng(0)) == Evaluate("c", 0)


def test_an_iteration_waits_for_its_offspring():
    policy = GEAPolicy(PARAMS)
    waiting = policy.next_action(four_agents(pending_expansions=(0,)), np.random.default_rng(0))
    assert isinstance(waiting, Stop) and "in flight" in waiting.reason
    # a child born, its last probe evaluation in flight (nothing more is due): still waiting
    view = four_agents(
        ids=("a", "b", "c", "d", "e"),
        parent=[-1, 0, 0, 0, 2],
        valid=[True] * 5,
        successes=[2, 2, 2, 3, 0],
        failures=[2, 2, 2, 1, 3],
        evaluated=[frozenset(range(4))] * 4 + [frozenset({0, 1, 2})],
        solved=[frozenset(SOLVED[i]) for i in "abcd"] + [frozenset()],
        pending_evaluations=((4, 3),),
    )
    assert isinstance(policy.next_action(view, np.random.default_rng(0)), Stop)


def test_a_view_without_outcomes_is_refused():
    view = four_agents(solved=())
    with pytest.raises(ValueError, match="per-task outcomes"):
        GEAPolicy(PARAMS).next_action(view, np.random.default_rng(0))


def test_simulated_group_iterations_make_one_child_per_parent():
    policy = GEAPolicy(GEAParams(stages=(5, 10), group_size=3))
    sizes: list[tuple[int, int]] = []  # (tree size when asked, group size asked for)

    class Recording:
        name = "gea"

        def next_action(self, view, rng):
            action = policy.next_action(view, rng)
            sizes.append((view.size, len(action.parents) if isinstance(action, ExpandGroup) else 0))
            return action

        def best(self, view):
            return policy.best(view)

    result = run_episode(Recording(), WorldParams(n_tasks=20), budget=120, seed=1)
    assert result.evaluations == 120
    groups = [(i, k) for i, (_, k) in enumerate(sizes) if k]
    assert groups[0][1] == 1 and max(k for _, k in groups) == 3  # the root alone first, then groups of K
    for i, k in groups[:-1]:
        assert sizes[i + 1][0] == sizes[i][0] + k  # every parent got its child, in one decision
