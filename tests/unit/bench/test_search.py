"""The search benchmark: its statistics, its JSON and its speed targets."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from evolve.bench.search import bench_search, evals_to_match, runner_state, time_runner_decision
from evolve.cli.app import app
from evolve.search import DGMPolicy, GreedyPolicy, HGMPolicy, RandomPolicy
from evolve.stats import mean_ci95


def test_mean_ci95_hand_computed():
    interval = mean_ci95([1.0, 2.0, 3.0, 4.0])
    half = 3.182446305 * np.std([1, 2, 3, 4], ddof=1) / 2  # t(0.975, 3) * sd / sqrt(4)
    assert interval.mean == 2.5
    assert (interval.low, interval.high) == pytest.approx((2.5 - half, 2.5 + half))
    assert mean_ci95([0.7]).to_json() == {"mean": 0.7, "ci95": [0.7, 0.7]}


def test_evals_to_match():
    trajectory = np.array([0.3, 0.3, 0.5, 0.4, 0.6])
    assert evals_to_match(trajectory, 0.5) == 2
    assert evals_to_match(trajectory, 0.3) == 0
    assert evals_to_match(trajectory, 0.7) is None


def test_bench_json_shape():
    result = bench_search(("hgm", "random"), budget=60, seeds=3, tree_nodes=500).to_json()
    assert set(result["policies"]) == {"hgm", "random"}  # dgm runs as the reference, unlisted
    for score in result["policies"].values():
        assert set(score["final_quality"]) == {"mean", "ci95"}
        low, high = score["best_quality"]["ci95"]
        assert low <= score["best_quality"]["mean"] <= high
        assert 0 <= score["evals_to_match_dgm"] <= 60
    runner = result["runner_path"]
    assert runner["nodes"] == 500 and runner["evaluations"] == 5_000
    assert 0 < runner["view_ms"] <= runner["decision_ms"] == result["decision_ms_10k_nodes"]
    with pytest.raises(ValueError, match="unknown policy"):
        bench_search(("nope",), budget=10, seeds=1)


def test_runner_state_is_the_runners_tree_of_the_asked_size():
    state = runner_state(300, 2_000, np.random.default_rng(0), n_tasks=20)
    assert len(state.tree) == 300 and state.used == 2_000
    view = state.view(state.used + 10)
    assert view.size == 300 and int(view.done.sum()) == 2_000 and view.in_flight_evaluations == 6
    assert len(view.pending_expansions) == 2 and view.clade_successes[0] + view.clade_failures[0] == 2_000


@pytest.mark.parametrize("policy", [HGMPolicy(), DGMPolicy(), GreedyPolicy(), RandomPolicy()],
                         ids=lambda p: p.name)  # fmt: skip
def test_runner_decision_times_the_view_and_the_decision_on_it(policy):
    state = runner_state(500, 5_000, np.random.default_rng(1))
    timing = time_runner_decision(policy, state, repeats=3)
    assert 0 < timing.view_ms <= timing.decision_ms
    assert state.used == 5_000  # timing decides, it never records


def test_cli_bench_search_json():
    outcome = CliRunner().invoke(app, ["bench", "search", "--budget", "40", "--seeds", "2", "--json"])
    assert outcome.exit_code == 0, outcome.output
    result = json.loads(outcome.output)
    assert set(result["policies"]) == {"hgm", "dgm", "gea", "greedy", "random"}
    assert result["runner_path"]["decision_ms"] > 0 and "decision_ms_10k_nodes" in result


def test_cli_bench_search_table_and_bad_policy():
    runner = CliRunner()
    outcome = runner.invoke(
        app, ["bench", "search", "--budget", "30", "--seeds", "2", "--policies", "hgm,dgm"]
    )
    assert outcome.exit_code == 0, outcome.output
    assert "hgm" in outcome.output and "10,000 nodes and 100,000 evaluations" in outcome.output
    assert "view build" in outcome.output
    assert runner.invoke(app, ["bench", "search", "--policies", "nope"]).exit_code != 0


def test_cli_takes_policy_parameters_from_a_run_config(tmp_path):
    from evolve.cli.bench import _policies_from_config

    config = tmp_path / "run.toml"
    config.write_text(
        "[policy.hgm]\nalpha = 0.5\nmin_evals = 3\n\n[policy.dgm]\nlam = 4.0\nstages = [5, 20]\n"
    )
    policies = _policies_from_config(config)
    assert policies["hgm"].params.alpha == 0.5 and policies["hgm"].params.min_evals == 3
    assert policies["dgm"].params.lam == 4.0 and policies["greedy"].params.stages == (5, 20)
    args = ["bench", "search", "--budget", "30", "--seeds", "1", "--json", "--config", str(config)]
    assert CliRunner().invoke(app, args).exit_code == 0
