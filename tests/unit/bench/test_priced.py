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
from evolve.search.worlds import RuggedParams

WORLD = WorldParams(n_tasks=30)


def test_sweep_json_has_each_policy_per_world_and_price_and_the_paired_difference():
    sweep = priced_sweep(
        ("hgm", "hgm_cost", "dgm"),
        (1.0, 4.0),
        budget=80,
        seeds=range(1000, 1003),
        worlds=("project", "rugged"),
        workers=1,
    )
    result = sweep.to_json()
    assert set(result["by_world"]) == {"project", "rugged"} and result["seeds"] == [1000, 1002]
    for world in result["by_world"].values():
        assert set(world) == {"1.0", "4.0"}
        for entry in world.values():
            assert set(entry["policies"]) == {"hgm", "hgm_cost", "dgm"}
            for score in entry["policies"].values():
                assert 0 < score["units"] and score["overspend_in_jobs"] <= 1.0
                assert set(score["final_quality"]) == {"mean", "ci95"}
            assert set(entry["hgm_cost_minus_hgm"]) == {"mean", "ci95"}
    assert set(result["estimators_on_fixed_trees"]) == {"hgm", "dgm", "hgm_cost"}
    # the pairing is per seed on the same world: recompute it from the episodes
    diffs = [
        run_episode(HGMCostPolicy(), RuggedParams(), 80, s, 4.0, trace=False).final_quality
        - run_episode(HGMPolicy(), RuggedParams(), 80, s, 4.0, trace=False).final_quality
        for s in range(1000, 1003)
    ]
    assert sweep.paired["rugged", 4.0].mean == pytest.approx(float(np.mean(diffs)))
    with pytest.raises(ValueError, match="unknown world family"):
        priced_sweep(("hgm",), (2.0,), budget=20, seeds=range(2), worlds=("flat",), workers=1)


def test_priced_policy_sets_no_price():
    assert isinstance(priced_policy("hgm_cost"), HGMCostPolicy)
    assert isinstance(priced_policy("hgm"), HGMPolicy)


def test_fixed_trees_and_the_estimators_on_them():
    view, truth = fixed_tree(WORLD, seed=0, nodes=20, evaluations=150)
    assert view.size == 20 and int(view.done.sum()) == 150 and truth.shape == (20,)
    again, _ = fixed_tree(WORLD, seed=0, nodes=20, evaluations=150)
    assert view.successes.tolist() == again.successes.tolist()  # fixed: the same trees every time
    accuracy = estimator_accuracy(WORLD, seeds=4)
    for interval in accuracy.values():
        assert -1.0 <= interval.mean <= 1.0


def test_bench_search_carries_the_sweep_and_the_cli_prints_it():
    result = bench_search(
        ("hgm",), budget=40, seeds=2, tree_nodes=200, expand_costs=(2.0,), priced_policies=("hgm", "hgm_cost")
    ).to_json()
    assert set(result["priced"]["by_world"]["rugged"]["2.0"]["policies"]) == {"hgm", "hgm_cost"}
    cli = CliRunner()
    out = cli.invoke(
        app,
        [
            "bench",
            "search",
            "--policies",
            "hgm",
            "--budget",
            "30",
            "--seeds",
            "2",
            "--expand-cost",
            "2",
            "--json",
        ],
    )
    assert out.exit_code == 0, out.output
    assert "2.0" in json.loads(out.output)["priced"]["by_world"]["project"]
    seeds = cli.invoke(
        app,
        [
            "bench",
            "search",
            "--policies",
            "hgm",
            "--budget",
            "20",
            "--seeds",
            "1",
            "--expand-cost",
            "2",
            "--priced-seeds",
            "5:6",
            "--worlds",
            "rugged",
            "--json",
        ],
    )
    assert seeds.exit_code == 0, seeds.output
    assert json.loads(seeds.output)["priced"]["seeds"] == [5, 6]
    bad = cli.invoke(app, ["bench", "search", "--expand-cost", "0.5"])
    assert bad.exit_code != 0 and "at least one evaluation unit" in _flat(bad.output)
    missing = cli.invoke(app, ["bench", "search", "--expand-cost-from", "/nonexistent/run"])
    assert missing.exit_code != 0 and "holds no run" in _flat(missing.output)


def _flat(text: str) -> str:
    """Typer's error box, unwrapped."""
    return " ".join(text.replace("│", " ").split())
