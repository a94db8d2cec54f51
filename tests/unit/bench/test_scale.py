"""`evolve bench scale` on the local executor: the measure, the JSON shape, the CLI."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from evolve.bench.scale import bench_scale, measure
from evolve.cli import app
from evolve.engine.executors import LocalExecutor


def test_sixteen_sleep_jobs_in_parallel_reach_most_of_ideal_throughput():
    executor = LocalExecutor(16)
    try:
        result = measure(executor, 16, sleep_s=0.2, rounds=2)
    finally:
        executor.shutdown()
    assert result.jobs == 32
    assert 0.8 <= result.fraction_of_ideal <= 1.01
    assert abs(result.jobs_per_s - 32 / result.seconds) < 1e-9


def test_too_few_workers_show_as_a_low_fraction_of_ideal():
    executor = LocalExecutor(2)  # four jobs asked to run at once, two can
    try:
        result = measure(executor, 4, sleep_s=0.1, rounds=2)
    finally:
        executor.shutdown()
    assert result.fraction_of_ideal < 0.6


def test_json_names_levels_and_says_why_ray_was_skipped():
    result = bench_scale(levels=(1, 4), sleep_s=0.05, rounds=2, ray=False).to_json()
    assert set(result["local"]) == {"1", "4"}
    assert set(result["local"]["4"]) == {"jobs_per_s", "fraction_of_ideal"}
    assert result["ray"] == {"skipped": "not asked for (--no-ray)"}


def test_the_cli_prints_one_json_object():
    ran = CliRunner().invoke(app, ["bench", "scale", "--no-ray", "--sleep", "0.1", "--rounds", "1", "--json"])
    assert ran.exit_code == 0, ran.output
    report = json.loads(ran.output)
    assert set(report["local"]) == {"1", "4", "16"}
    assert all(
        0 < row["fraction_of_ideal"] <= 1.01 and row["jobs_per_s"] > 0 for row in report["local"].values()
    )
    assert report["ray"] == {"skipped": "not asked for (--no-ray)"}
