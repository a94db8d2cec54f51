"""The priced sweep of `evolve bench search`: its JSON, its pairing, the estimators on fixed trees."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from evolve.bench.priced import estimator_accuracy, fixed_tree, priced_policy, priced_sweep
from evolve.bench.search import bench_search
from evolve.cli.app import app
from evolve.search import HGMCostPolicy, HGMPolicy
from evolve.search.simulate import WorldParams, run_episode

WORLD = WorldParams(n_tasks=30)


def test_sweep_json_has_each_policy_per_price_and_the_paired_difference():
    sweep = priced_sweep(("hgm", "hgm_cost", "dgm"), (1.0, 4.0), budget=80, seeds=3, world=WORLD, workers=1)
    result = sweep.to_json()
    assert set(result["by_expand_cost"]) == {"1.0", "4.0"}
    for entry in result["by_expand_cost"].values():
        assert set(entry["policies"]) == {"hgm", "hgm_cost", "dgm"}
        for score in entry["policies"].values():
            assert 0 < score["units"] <= 80 and set(score["final_quality"]) == {"mean", "ci95"}
        assert set(entry["hgm_cost_minus_hgm"]) == {"mean", "ci95"}
    assert set(result["estimators_on_fixed_trees"]) == {"hgm", "dgm", "hgm_cost"}
    # the pairing is per seed on the same world: recompute it from the episodes
    diffs = [run_episode(HGMCostPolicy(HGMCostPolicy().params.__class__(expand_cost=4.0)), WORLD, 80, s, 4.0,
                         trace=False).final_quality
             - run_episode(HGMPolicy(), WORLD, 80, s, 4.0, trace=False).final_quality for s in range(3)]
    assert sweep.paired[4.0].mean == pytest.approx(float(np.mean(diffs)))


def test_priced_policy_is_told_the_price():
    assert priced_policy("hgm_cost", 8.0).params.expand_cost == 8.0
    assert isinstance(priced_policy("hgm", 8.0), HGMPolicy)


def test_fixed_trees_and_the_estimators_on_them():
    view, truth = fixed_tree(WORLD, seed=0, nodes=20, evaluations=150)
    assert view.size == 20 and int(view.done.sum()) == 150 and truth.shape == (20,)
    again, _ = fixed_tree(WORLD, seed=0, nodes=20, evaluations=150)
    assert view.successes.tolist() == again.successes.tolist()  # fixed: the same trees every time
    accuracy = estimator_accuracy(WORLD, seeds=4)
    for interval in accuracy.values():
        assert -1.0 <= interval.mean <= 1.0


def test_bench_search_carries_the_sweep_and_the_cli_prints_it():
    result = bench_search(("hgm",), budget=40, seeds=2, tree_nodes=200, expand_costs=(2.0,),
                          priced_policies=("hgm", "hgm_cost")).to_json()
    assert set(result["priced"]["by_expand_cost"]["2.0"]["policies"]) == {"hgm", "hgm_cost"}
    cli = CliRunner()
    out = cli.invoke(app, ["bench", "search", "--policies", "hgm", "--budget", "30", "--seeds", "2",
                           "--expand-cost", "2", "--json"])
    assert out.exit_code == 0, out.output
    assert "2.0" in json.loads(out.output)["priced"]["by_expand_cost"]
    bad = cli.invoke(app, ["bench", "search", "--expand-cost", "0.5"])
    assert bad.exit_code != 0 and "at least one evaluation unit" in _flat(bad.output)
    missing = cli.invoke(app, ["bench", "search", "--expand-cost-from", "/nonexistent/run"])
    assert missing.exit_code != 0 and "holds no run" in _flat(missing.output)


def _flat(text: str) -> str:
    """Typer's error box, unwrapped."""
    return " ".join(text.replace("│", " ").split())
