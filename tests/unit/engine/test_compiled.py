"""DGM's "compiled" check ([meta] compiled_check) with the real Runner and the scripted worker.

Node 1 (the root's first child) leaves an empty patch on every task; the engine's diff.patch of each
job says so, and the check must make it invalid after its first stage and never let a policy grow it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from evolve.archive import Run
from evolve.config import BudgetConfig, RunConfig
from evolve.engine.executors import LocalExecutor
from evolve.engine.runner import Runner
from evolve.meta.compiled import compiled_verdict, patch_empty, stage_size
from evolve.search import DGMParams, DGMPolicy, HGMPolicy
from evolve.standins.worker import ScriptedWorker
from tests.unit.engine.conftest import TASKS, seeded_run

STAGE = 3
POLICY = DGMPolicy(DGMParams(stages=(STAGE, 4), stage_threshold=0.0))
REASON = "not compiled: every patch of the stage is empty"


@pytest.fixture
def execute(tmp_path):
    """execute(run, evaluations, compiled_stage, policy=POLICY) -> RunOutcome, at concurrency 1
    (deterministic)."""
    executors = []

    def go(run: Run, evaluations: int, compiled_stage: int | None, policy=POLICY):
        executor = LocalExecutor(1)
        executors.append(executor)
        worker = ScriptedWorker(run, seed=1, empty_patches={"1"})
        runner = Runner(
            run,
            policy,
            worker,
            executor,
            search_tasks=TASKS,
            budget=BudgetConfig(evaluations=evaluations),
            concurrency=1,
            seed=3,
            compiled_stage=compiled_stage,
        )
        return runner.execute()

    yield go
    for executor in executors:
        executor.shutdown(cancel_pending=True)


def _first_checked(run: Run, node: str) -> float:
    """When the node's first stage was complete (its STAGE-th result was recorded)."""
    return run.evaluations(node, split="dev")[STAGE - 1].created


def _grown_after(run: Run, node: str, since: float) -> list:
    expansions = [j for j in run.jobs() if j.kind == "expand" and j.node == node and j.started >= since]
    return expansions + [n for n in run.nodes() if n.parent == node and n.created >= since]


def test_a_child_with_only_empty_patches_becomes_invalid_and_is_never_grown(execute, tmp_path):
    run = seeded_run(tmp_path / "run")
    execute(run, 30, STAGE)
    child = run.node("1")
    assert (child.valid, child.reason) == (False, REASON)
    assert len(run.evaluations("1", split="dev")) == STAGE  # its results stay; no more are run
    assert not _grown_after(run, "1", _first_checked(run, "1"))
    others = [n for n in run.nodes() if n.parent is not None and n.id != "1"]
    assert others and all(n.valid for n in others)  # children with a real patch pass the check
    assert any(len(run.evaluations(n.id, split="dev")) > STAGE for n in others)
    assert run.node("0").valid  # the root is never checked


def test_the_check_applies_under_hgm_too(execute, tmp_path):
    run = seeded_run(tmp_path / "run")
    execute(run, 60, STAGE, policy=HGMPolicy())
    child = run.node("1")
    assert (child.valid, child.reason) == (False, REASON)
    assert len(run.evaluations("1", split="dev")) == STAGE
    assert not _grown_after(run, "1", _first_checked(run, "1"))


def test_with_the_option_off_nothing_changes(execute, tmp_path):
    off = seeded_run(tmp_path / "off")
    execute(off, 30, None)
    plain = seeded_run(tmp_path / "plain")
    executor = LocalExecutor(1)
    try:
        Runner(
            plain,
            POLICY,
            ScriptedWorker(plain, seed=1),
            executor,
            search_tasks=TASKS,
            budget=BudgetConfig(evaluations=30),
            concurrency=1,
            seed=3,
        ).execute()
    finally:
        executor.shutdown(cancel_pending=True)
    assert all(n.valid for n in off.nodes())
    assert len(off.evaluations("1", split="dev")) > STAGE

    def picture(run: Run):
        return (
            [(n.id, n.parent, n.status) for n in run.nodes()],
            [(e.node, e.task, e.outcome) for e in run.evaluations()],
        )

    assert picture(off) == picture(plain)


def test_the_verdict_survives_a_resume(execute, tmp_path):
    run = seeded_run(tmp_path / "run")
    execute(run, 20, STAGE)
    assert run.node("1").reason == REASON
    path = run.path
    run.close()
    with Run.open(path, writer=True) as resumed:
        execute(resumed, 40, STAGE)
        assert (resumed.node("1").valid, resumed.node("1").reason) == (False, REASON)
        assert len(resumed.evaluations("1", split="dev")) == STAGE
        assert not _grown_after(resumed, "1", _first_checked(resumed, "1"))


def test_a_resume_checks_a_child_whose_stage_completed_before_a_crash(execute, tmp_path):
    # A run killed between recording the stage's last result and the check leaves a valid child with
    # a full first stage: the same archive as a session run with the check off.
    run = seeded_run(tmp_path / "run")
    execute(run, 20, None)
    assert run.node("1").valid and len(run.evaluations("1", split="dev")) >= STAGE
    path = run.path
    run.close()
    with Run.open(path, writer=True) as resumed:
        started = max(j.started for j in resumed.jobs())
        execute(resumed, 40, STAGE)
        assert (resumed.node("1").valid, resumed.node("1").reason) == (False, REASON)
        assert not _grown_after(resumed, "1", started + 1e-9)


def test_patch_emptiness_comes_from_the_runs_own_job_logs(tmp_path):
    run = seeded_run(tmp_path / "run")
    child = run.add_node(run.checkout("0", tmp_path / "c"), parent="0", origin="self_modify")
    elsewhere = tmp_path / "elsewhere" / "job-7"
    elsewhere.mkdir(parents=True)
    (elsewhere / "diff.patch").write_text("+ a patch outside the run\n")
    (run.log_dir(7) / "diff.patch").write_text("")
    evaluation = run.record_evaluation(child.id, TASKS[0], "fail", log_path=str(elsewhere))
    assert patch_empty(run, evaluation) is True  # read from the run's logs/job-7, not the row's path
    missing = run.record_evaluation(child.id, TASKS[1], "fail", log_path=str(Path("logs") / "job-8"))
    assert patch_empty(run, missing) is None
    run.record_evaluation(child.id, TASKS[2], "infra", log_path=None)
    # No record of one patch: the check does not judge (a pruned log never fails a node).
    assert compiled_verdict(run, child.id, 2, TASKS) is None
    assert compiled_verdict(run, child.id, 3, TASKS) is None  # fewer counted results than the stage


def test_stage_size_follows_the_config():
    assert stage_size(RunConfig(), 100) is None
    on = RunConfig.model_validate({"meta": {"compiled_check": True}, "policy": {"dgm": {"stages": [7, 20]}}})
    assert stage_size(on, 100) == 7 and stage_size(on, 4) == 4
