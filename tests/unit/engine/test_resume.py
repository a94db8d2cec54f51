"""Resume re-queues exactly what each interrupted job was: held-out scoring stays held-out."""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict

from evolve.archive import Run
from evolve.archive.vocab import StopReason
from evolve.config import BudgetConfig
from evolve.engine.resume import recover
from evolve.engine.runner import task_order
from evolve.engine.state import SearchState
from tests.unit.archive.test_schema import V2_ANSWERS, downgrade_to_v1, status, v2_run
from tests.unit.engine.conftest import HELDOUT, TASKS


def _interrupt_heldout(run: Run, node: str, tasks: list[str], *, split: str | None = "heldout") -> list[int]:
    """What a kill during held-out scoring leaves: some results, some jobs `started`."""
    ids = []
    for task in tasks:
        ids.append(run.start_job("evaluate", node, task, split=split).id)
    return ids


def _check_heldout_apart(run: Run, budget: int) -> None:
    dev = [e for e in run.evaluations(split="dev") if e.outcome != "infra"]
    assert not {e.task for e in dev} & set(HELDOUT)
    assert len(dev) == budget
    assert max(Counter((e.node, e.task) for e in dev).values()) == 1
    heldout = run.evaluations(split="heldout")
    assert sorted(e.task for e in heldout) == sorted(HELDOUT)
    assert not run.jobs("started")


def test_interrupted_heldout_scoring_resumes_as_heldout(make_runner):
    runner, run, _ = make_runner(BudgetConfig(evaluations=10), concurrency=1)
    first = runner.execute()
    best = first.best_node
    # Pretend the kill came during held-out scoring: drop two results, leave their jobs started.
    run._db.execute("DELETE FROM evaluations WHERE split = 'heldout' AND task IN ('held-1', 'held-2')")
    interrupted = _interrupt_heldout(run, best, ["held-1", "held-2"])
    runner2, _, _ = make_runner(BudgetConfig(evaluations=10), run=run, concurrency=1)
    second = runner2.execute()
    assert second.heldout_scored and second.best_node == best
    _check_heldout_apart(run, 10)
    jobs = {j.id: j for j in run.jobs()}
    for job_id in interrupted:
        (rerun,) = [j for j in jobs.values() if j.requeue_of == job_id]
        assert (rerun.split, rerun.attempt, rerun.state) == ("heldout", 2, "finished")


def test_a_v1_run_killed_during_heldout_scoring_resumes_as_heldout(make_runner, tmp_path):
    runner, run, _ = make_runner(BudgetConfig(evaluations=10), concurrency=1)
    best = runner.execute().best_node
    run._db.execute("DELETE FROM evaluations WHERE split = 'heldout' AND task = 'held-2'")
    _interrupt_heldout(run, best, ["held-2"])
    path = run.path
    run.close()
    downgrade_to_v1(path)
    resumed = Run.open(path, writer=True)
    runner2, _, _ = make_runner(BudgetConfig(evaluations=10), run=resumed, concurrency=1)
    assert runner2.execute().heldout_scored
    _check_heldout_apart(resumed, 10)
    resumed.close()


def test_a_job_of_another_command_is_not_run_by_the_search(make_runner):
    runner, run, _ = make_runner(BudgetConfig(evaluations=10), concurrency=1)
    runner.execute()
    unevaluated = next(
        t
        for t in ("task-00", "task-01", "task-02", "task-03")
        if t not in {e.task for e in run.evaluations("0")}
    )
    stray = run.start_job("evaluate", "0", unevaluated)  # an `evolve eval` killed midway: no split
    runner2, _, _ = make_runner(BudgetConfig(evaluations=10), run=run, concurrency=1)
    runner2.execute()
    assert run.jobs()[stray.id - 1].detail == "interrupted"
    assert not [e for e in run.evaluations("0", split="dev") if e.task == unevaluated]


def test_invalid_expansions_in_a_row_stop_the_run_and_leave_no_parent_code_in_logs(make_runner):
    budget = BudgetConfig(evaluations=200, invalid_streak=5)
    runner, run, _ = make_runner(budget, concurrency=1, invalid_every=1)
    outcome = runner.execute()
    assert outcome.stop == StopReason.INVALID_STREAK
    assert "5 invalid expansions in a row" in outcome.stop_reason
    invalid = [n for n in run.nodes() if not n.valid]
    assert len(invalid) >= 5 and outcome.evaluations_used < 200
    assert not list(run.path.glob("logs/*/child")) and not list(run.path.glob("logs/*/parent-code"))


def test_a_v2_run_migrated_re_queues_what_the_old_code_re_queued(tmp_path):
    with Run.open(v2_run(tmp_path), writer=True) as run:
        state = SearchState.from_run(run, task_order(TASKS, 3))
        queue = recover(run, search_tasks=state.task_order, heldout_tasks=HELDOUT, evaluated=state.evaluated)
    assert [j.id for j in queue.search] == V2_ANSWERS["requeue"]["search"] == [19, 20]
    assert [j.id for j in queue.heldout] == V2_ANSWERS["requeue"]["heldout"]
    assert [j.requeue_of for j in queue.search] == [None, 17]  # 20 re-ran 17, was itself interrupted


def _without_detail_and_times(jobs: list[dict]) -> list[dict]:
    return [{k: v for k, v in job.items() if k not in ("detail", "started", "finished")} for job in jobs]


def _resume_v2_run(make_runner, tmp_path) -> tuple[Run, dict, list[dict]]:
    """The migrated fixture resumed to an evaluation budget of 14 (its maker's tasks, seed, worker)."""
    run = Run.open(v2_run(tmp_path), writer=True)
    runner, _, _ = make_runner(BudgetConfig(evaluations=14), run=run, concurrency=1)
    outcome = runner.execute()
    return run, asdict(outcome), [asdict(job) for job in run.jobs()]


def test_a_v2_run_migrated_re_runs_what_the_old_code_re_ran_and_loses_nothing(make_runner, tmp_path):
    run, outcome, jobs = _resume_v2_run(make_runner, tmp_path)
    old = V2_ANSWERS["resumed"]["jobs"]
    assert _without_detail_and_times(jobs[:23]) == _without_detail_and_times(old[:23])  # the fixture, then
    assert [(j["requeue_of"], j["attempt"], j["state"]) for j in jobs[21:23]] == [
        (19, 2, "finished"),
        (20, 3, "finished"),
    ]
    assert jobs[20]["state"] == "cancelled" and 21 not in {j["requeue_of"] for j in jobs}  # `evolve eval`'s
    dev = [e for e in run.evaluations(split="dev") if e.outcome != "infra"]
    assert len(dev) == 14 == outcome["evaluations_used"]
    assert max(Counter((e.node, e.task) for e in dev).values()) == 1
    assert not run.jobs("started") and outcome["heldout_scored"]
    run.close()


def test_a_v2_run_migrated_resumes_to_the_end_the_old_code_reached(make_runner, tmp_path):
    """Holds while the search decides as at 9c40030 (HGM on the scripted worker): a change that alters
    the search's decisions on purpose changes this end, not what the migration kept."""
    expected = V2_ANSWERS["resumed"]
    run, outcome, jobs = _resume_v2_run(make_runner, tmp_path)
    assert outcome == {**expected["outcome"], "stop": StopReason.EVALUATION_BUDGET, "seed_node": None}
    # The best node's counts follow the search's counting rule now: its 3 held-out results no longer count.
    now = status(run)
    assert 0 < now.pop("cpu_hours") < 0.01  # new since 9c40030: the jobs' wall time, here seconds
    assert now.pop("best_node").items() >= {"evaluated": 7, "id": "0", "passed": 5}.items()
    assert now.pop("flagged") == []  # new since: the nodes with a forged verdict
    assert now.pop("evaluations") == {**expected["status"]["evaluations"], "forged": 0}
    assert now == {k: v for k, v in expected["status"].items() if k not in ("best_node", "evaluations")}
    # The same work, in the same order; only what the old code wrote into `detail` differs.
    assert _without_detail_and_times(jobs) == _without_detail_and_times(expected["jobs"])
    old_detail = {job["id"]: job["detail"] for job in expected["jobs"]}
    rerun_by = {job["requeue_of"]: job["id"] for job in jobs if job["requeue_of"] is not None}
    for job in jobs:
        if (old_detail[job["id"]] or "").startswith("requeued as job"):
            assert old_detail[job["id"]] == f"requeued as job {rerun_by[job['id']]}"
        else:
            assert job["detail"] == old_detail[job["id"]]
    run.close()


def test_a_stop_during_heldout_scoring_starts_no_new_heldout_job_and_a_resume_scores_the_rest(make_runner):
    runner, run, worker = make_runner(BudgetConfig(evaluations=10), concurrency=1)
    evaluate = worker.evaluate

    def stop_after_the_first_heldout(job, node, task, split):
        result = evaluate(job, node, task, split)
        if split == "heldout":
            runner.request_stop()  # the first Ctrl-C, while the final agent is being scored
        return result

    worker.evaluate = stop_after_the_first_heldout
    first = runner.execute()
    assert not first.heldout_scored
    assert len(run.evaluations(split="heldout")) == 1, "no held-out job started after the stop"
    assert not run.jobs("started")
    runner2, _, _ = make_runner(BudgetConfig(evaluations=10), run=run, concurrency=1)
    second = runner2.execute()
    assert second.heldout_scored and second.best_node == first.best_node
    _check_heldout_apart(run, 10)
