"""CPU-hours and the price of an expansion, from a run's own rows."""

from __future__ import annotations

import pytest

from evolve.archive import Run
from evolve.archive.compute import cpu_hours, expansion_price, run_cpu_hours, sandbox_cpus
from evolve.archive.records import Evaluation, Job, Node
from evolve.config import RunConfig


def _job(id_: int, kind: str, seconds: float, state: str = "finished") -> Job:
    return Job(id_, kind, "0", None if kind == "expand" else "t", state, 100.0, 100.0 + seconds)  # type: ignore[arg-type]


def test_expansion_price_by_wall_time_and_by_tokens():
    jobs = [
        _job(1, "expand", 200.0),
        _job(2, "expand", 230.0),
        _job(3, "evaluate", 50.0),
        _job(4, "evaluate", 56.0),
        _job(5, "expand", 9999.0, state="cancelled"),
    ]  # an interrupted job is no measure of the price
    nodes = [
        Node("0", None, "c", 0.0, "seed", "valid", tokens=9_000),
        Node("1", "0", "c", 0.0, "x", "valid", tokens=1_000),
    ]
    evaluations = [
        Evaluation("0", "t", 1, "pass", 50.0, tokens=1_000),
        Evaluation("1", "t", 1, "fail", 56.0, tokens=1_000),
    ]
    price = expansion_price(jobs, nodes, evaluations)
    assert (price.expansions, price.evaluations) == (2, 2)
    assert price.by_wall_time == pytest.approx(215.0 / 53.0)
    assert price.by_tokens == pytest.approx((8_000 / 2) / (2_000 / 2))
    empty = expansion_price([], [], [])
    assert empty.by_wall_time is None and empty.by_tokens is None


def test_cpu_hours_count_every_job_and_the_sandbox_cpus(tmp_path):
    assert cpu_hours(7200.0, 2.0) == 4.0
    run = Run.create(tmp_path / "run", RunConfig.model_validate({"sandbox": {"cpus": 2.0}}))
    seed = tmp_path / "seed"
    seed.mkdir()
    (seed / "a.py").write_text("x\n")
    run.add_node(seed)
    done = run.start_job("expand", "0")
    run.finish_job(done.id, "finished")
    running = run.start_job("evaluate", "0", "t")
    assert sandbox_cpus(run) == 2.0
    now = running.started + 1800.0
    hours = run_cpu_hours(run, 2.0, now=now)
    # the running job counts up to now (half an hour on 2 CPUs), the finished one its few milliseconds
    assert 1.0 <= hours < 1.01
