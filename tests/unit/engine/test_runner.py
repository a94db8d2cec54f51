import threading
from collections import Counter

import pytest

from evolve.archive.vocab import StopReason
from evolve.config import BudgetConfig
from evolve.engine.runner import task_order
from evolve.search import DGMPolicy, GreedyPolicy, RandomPolicy

from .conftest import HELDOUT, TASKS, seeded_run


def counted(run):
    return [e for e in run.evaluations(split="dev") if e.outcome != "infra"]


def test_run_spends_exactly_the_evaluation_budget(make_runner):
    runner, run, _ = make_runner(BudgetConfig(evaluations=30))
    outcome = runner.execute()
    assert outcome.evaluations_used == 30 and len(counted(run)) == 30
    assert outcome.stop == StopReason.EVALUATION_BUDGET
    assert outcome.stop_reason == "evaluation budget spent (30/30)"
    pairs = Counter((e.node, e.task) for e in counted(run))
    assert max(pairs.values()) == 1  # never a task twice on one node
    assert len(run.nodes()) > 1  # HGM expanded
    assert all(j.state == "finished" for j in run.jobs())
    # The final agent was scored on every held-out task, and held-out results stay out of the tree.
    heldout = run.evaluations(split="heldout")
    assert sorted(e.task for e in heldout) == HELDOUT and {e.node for e in heldout} == {outcome.best_node}
    assert outcome.heldout_total == 3
    assert run.tree().own_counts(outcome.best_node).total == sum(
        1 for e in counted(run) if e.node == outcome.best_node
    )


def test_clade_counts_match_a_recount(make_runner):
    runner, run, _ = make_runner(BudgetConfig(evaluations=40), invalid_every=3)
    runner.execute()
    nodes = run.nodes()
    own = Counter()
    for e in counted(run):
        own[(e.node, e.outcome == "pass")] += 1
    tree = runner.state.tree
    for node in nodes:
        clade = [node.id] + tree.descendants(node.id)
        assert tree.clade_counts(node.id).successes == sum(own[(n, True)] for n in clade)
        assert tree.clade_counts(node.id).failures == sum(own[(n, False)] for n in clade)
    invalid = [n for n in nodes if not n.valid]
    assert invalid and all(n.reason == "scripted invalid child" for n in invalid)
    assert not any(e.node in {n.id for n in invalid} for e in run.evaluations())
    assert not any(j.kind == "expand" and j.node in {n.id for n in invalid} for j in run.jobs())


@pytest.mark.parametrize("policy", [DGMPolicy(), GreedyPolicy(), RandomPolicy()], ids=lambda p: p.name)
def test_baselines_run_on_the_same_runner(make_runner, policy):
    runner, _run, _ = make_runner(BudgetConfig(evaluations=25), policy=policy)
    assert runner.execute().evaluations_used == 25


@pytest.mark.parametrize(
    ("budget", "reason"),
    [
        (BudgetConfig(evaluations=500, expansions=3), StopReason.EXPANSION_BUDGET),
        (BudgetConfig(evaluations=500, tokens=1000), StopReason.TOKEN_BUDGET),
        (BudgetConfig(evaluations=500, dollars=0.002), StopReason.DOLLAR_BUDGET),
        (BudgetConfig(evaluations=500, wall_clock_s=0.5), StopReason.WALL_CLOCK_BUDGET),
    ],
)
def test_each_budget_stops_new_work(make_runner, budget, reason):
    concurrency = 2
    runner, run, _ = make_runner(budget, concurrency=concurrency, delay_s=0.05, tokens_per_job=100)
    outcome = runner.execute()
    assert outcome.stop_reason.startswith(reason) and (
        outcome.stop == reason
        or (reason == StopReason.EXPANSION_BUDGET and outcome.stop == StopReason.EVALUATION_BUDGET)
    )
    jobs = run.jobs()
    if budget.expansions is not None:
        assert sum(j.kind == "expand" for j in jobs) == budget.expansions
        # no more expansions, but the search goes on evaluating: every valid node gets its results
        assert (
            "every valid node is evaluated" in outcome.stop_reason
            or "evaluation budget" in outcome.stop_reason
        )
        evaluated = {(e.node, e.task) for e in run.evaluations() if e.task not in HELDOUT}
        for node in run.nodes():
            if node.valid:
                assert all((node.id, task) in evaluated for task in TASKS), node.id
    if budget.tokens is not None or budget.dollars is not None:
        # The runner prices the jobs in flight and reserves the held-out scoring: the whole run,
        # held-out scoring included, ends within one job (100 tokens, $0.0001) of the limit.
        assert budget.tokens is None or budget.tokens - 100 < 100 * len(jobs) <= budget.tokens + 100
        assert budget.dollars is None or 19 < len(jobs) <= 21
    assert all(j.state == "finished" for j in jobs)


def test_a_node_that_passes_every_search_task_ends_the_search_when_asked_and_is_the_final_agent(make_runner):
    # The seed fails everything; its first child passes everything. Later children could only tie it.
    outcomes = {("0", task): "fail" for task in TASKS} | {("1", task): "pass" for task in TASKS}
    budget = BudgetConfig(evaluations=120, expansions=6, stop_when_solved=True)
    runner, run, _ = make_runner(budget, concurrency=1, outcomes=outcomes)
    outcome = runner.execute()
    assert outcome.stop == StopReason.SOLVED and outcome.best_node == "1"
    assert (
        outcome.stop_reason == f"a node passed every search task (node 1, {len(TASKS)} of {len(TASKS)}; "
        "`[budget] stop_when_solved`)"
    )
    assert counted(run)[-1].node == "1"  # nothing started after its last pass
    assert [e.task for e in run.evaluations("1", split="heldout")] == HELDOUT  # still scored held-out
    # Without the switch the same run spends its expansion budget on nodes that can only tie.
    runner, full, _ = make_runner(
        BudgetConfig(evaluations=120, expansions=6),
        concurrency=1,
        outcomes=outcomes,
        run=seeded_run(run.path.parent / "full"),
    )
    assert runner.execute().stop != StopReason.SOLVED
    assert sum(j.kind == "expand" for j in full.jobs()) == 6 > sum(j.kind == "expand" for j in run.jobs())


def test_runs_are_reproducible(tmp_path, make_runner):
    from .conftest import seeded_run

    def decisions(path):
        runner, run, _ = make_runner(BudgetConfig(evaluations=20), run=seeded_run(path), concurrency=1)
        runner.execute()
        return [(j.kind, j.node, j.task) for j in run.jobs()]

    assert decisions(tmp_path / "a") == decisions(tmp_path / "b")


def test_task_order_is_seeded_and_complete():
    assert task_order(TASKS, 1) == task_order(list(reversed(TASKS)), 1)
    assert sorted(task_order(TASKS, 1)) == sorted(TASKS)
    assert task_order(TASKS, 1) != task_order(TASKS, 2)


def test_stop_then_cancel(make_runner):
    runner, run, _worker = make_runner(BudgetConfig(evaluations=500), delay_s=0.2)
    threading.Timer(0.5, runner.request_stop).start()
    outcome = runner.execute()
    assert outcome.stop_reason == "stop requested" and outcome.stop == StopReason.STOP_REQUESTED
    assert all(j.state == "finished" for j in run.jobs())  # jobs in flight were let finish
    assert run.evaluations(split="heldout") == []  # a user's stop skips held-out scoring

    runner2, _, worker2 = make_runner(BudgetConfig(evaluations=500), run=run, delay_s=5.0)
    threading.Timer(0.5, runner2.cancel).start()
    cancelled_outcome = runner2.execute()
    assert cancelled_outcome.stop_reason == "cancelled" and cancelled_outcome.stop == StopReason.CANCELLED
    assert worker2.cancelled.is_set()
    cancelled = run.jobs("cancelled")
    assert cancelled and all(j.detail == "cancelled by the user" for j in cancelled)


def test_infra_outcomes_do_not_count_and_a_broken_engine_stops_the_run(make_runner, tmp_path):
    from .conftest import seeded_run

    run = seeded_run(tmp_path / "infra")
    outcomes = {("0", t): "infra" for t in TASKS}
    runner, run, _ = make_runner(BudgetConfig(evaluations=10), run=run, outcomes=outcomes, concurrency=1)
    outcome = runner.execute()
    infra = [e for e in run.evaluations() if e.outcome == "infra"]
    assert infra and runner.state.tree.own_counts("0").total == 0
    assert "infrastructure failures" in outcome.stop_reason or outcome.evaluations_used == 10
    assert outcome.stop in (StopReason.INFRA_STREAK, StopReason.EVALUATION_BUDGET)


def test_resume_reruns_interrupted_jobs_once(make_runner):
    runner, run, _ = make_runner(BudgetConfig(evaluations=10))
    runner.execute()
    before = len(run.evaluations(split="dev"))
    # Simulate a crash: two jobs started and never finished.
    unevaluated = next(t for t in TASKS if t not in {e.task for e in run.evaluations("0")})
    crashed_eval = run.start_job("evaluate", "0", unevaluated, split="dev", decision=run.decisions_recorded())
    crashed_expand = run.start_job("expand", "0", decision=run.decisions_recorded())
    runner2, _, _ = make_runner(BudgetConfig(evaluations=10), run=run)
    runner2.execute()
    jobs = {j.id: j for j in run.jobs()}
    rerun_of = {j.requeue_of for j in jobs.values()}
    assert jobs[crashed_eval.id].state == "cancelled" and {crashed_eval.id, crashed_expand.id} <= rerun_of
    reruns = [
        j
        for j in jobs.values()
        if j.id > crashed_expand.id and j.kind == "evaluate" and j.task == unevaluated
    ]
    assert len(reruns) == 1 and reruns[0].state == "finished"
    assert len(run.evaluations(split="dev")) == before + 1  # budget already spent: only the re-run
    # A third session finds nothing to re-run.
    runner3, _, _ = make_runner(BudgetConfig(evaluations=10), run=run)
    runner3.execute()
    assert len(run.evaluations(split="dev")) == before + 1


def test_the_cpu_hour_budget_stops_new_work_and_is_shown(make_runner):
    """Evaluations and expansions alike spend CPU-hours (job wall time x sandbox CPUs)."""
    from evolve.archive.summary import render_summary, run_summary
    from evolve.engine.progress import Snapshot

    concurrency, delay = 2, 0.05
    limit = 20 * delay / 3600.0  # about 20 jobs of one CPU each
    runner, run, _ = make_runner(
        BudgetConfig(evaluations=500, cpu_hours=limit), concurrency=concurrency, delay_s=delay
    )
    outcome = runner.execute()
    assert "CPU-hour budget" in outcome.stop_reason
    jobs = run.jobs()
    search = [j for j in jobs if not (j.kind == "evaluate" and j.task in HELDOUT)]
    assert {j.kind for j in search} == {"evaluate", "expand"}
    seconds = sum(j.finished - j.started for j in jobs)
    # The runner prices the jobs in flight and reserves the held-out scoring at the measured price of a job,
    # so the whole run ends near the limit, over it by at most a job or two of timing noise.
    assert limit * 3600 - 3 * delay <= seconds <= limit * 3600 + concurrency * 2 * delay
    assert len(search) < 40
    summary = run_summary(run)
    assert summary["cpu_hours"] == pytest.approx(sum(j.finished - j.started for j in jobs) / 3600, abs=1e-4)
    assert "CPU-hours" in render_summary(summary)
    assert "0.01 CPU-h" in Snapshot(cpu_hours=0.0125).line()


@pytest.mark.parametrize("heldout_seed", [False, True])
def test_the_seed_is_scored_on_the_heldout_tasks_beside_the_final_agent_when_asked(make_runner, heldout_seed):
    failing_seed = {("0", task): "fail" for task in TASKS + HELDOUT}  # so the final agent is a child
    runner, run, _ = make_runner(
        BudgetConfig(evaluations=30), heldout_seed=heldout_seed, outcomes=failing_seed
    )
    outcome = runner.execute()
    assert outcome.heldout_scored and outcome.best_node not in (None, "0")
    scored = {(e.node, e.task) for e in run.evaluations(split="heldout")}
    final = {(outcome.best_node, task) for task in HELDOUT}
    assert scored == (final | {("0", task) for task in HELDOUT} if heldout_seed else final)
    assert outcome.heldout_total == len(HELDOUT)  # the final agent's score
    assert outcome.seed_node == ("0" if heldout_seed else None)


def test_the_eta_counts_the_binding_budget_and_the_heldout_scoring_and_progress_goes_on_through_it(
    make_runner,
):
    """A run under `cpu_hours` showed `eta 46.9 min` with about four hours to go: the estimate counted
    evaluations left of `[budget] evaluations` at this session's pace and no held-out scoring, which then
    ran for hours with no progress line at all."""
    import time

    from evolve.archive.vocab import JobKind

    class Shown:
        def __init__(self) -> None:
            self.snapshots: list[tuple[float, object]] = []

        def update(self, snapshot) -> None:
            self.snapshots.append((time.monotonic(), snapshot))

    delay = 0.05
    runner, _, _ = make_runner(
        BudgetConfig(evaluations=500, cpu_hours=16 * delay / 3600.0),
        concurrency=1,
        delay_s=delay,
        heldout_seed=True,
    )
    runner.progress = shown = Shown()
    outcome = runner.execute()
    end = time.monotonic()
    snapshots = shown.snapshots
    owed = len(HELDOUT) * (1 if outcome.best_node == "0" else 2)  # the seed is not scored twice
    assert snapshots[0][1].heldout_total == 2 * len(HELDOUT)  # at most, while the final agent is not known
    assert snapshots[-1][1].final and snapshots[-1][1].eta_s == 0.0
    assert snapshots[-1][1].heldout_scored == owed == snapshots[-1][1].heldout_total
    heldout = [s for _, s in snapshots if any(task in HELDOUT for _, _, task in s.in_flight)]
    assert heldout and all(kind == JobKind.EVALUATE for s in heldout for kind, _, _ in s.in_flight)
    assert [s.heldout_scored for s in heldout] == sorted(s.heldout_scored for s in heldout)
    assert f"held-out 0/{owed}" in heldout[0].line()
    # Every estimate once a job has finished: about the time the run then took (the held-out six included).
    for at, snapshot in snapshots[:-1]:
        if snapshot.eta_s is not None:
            assert 0.3 * (end - at) - 3 * delay <= snapshot.eta_s <= 3 * (end - at) + 3 * delay, (
                snapshot.line()
            )
    assert any(s.eta_s is not None for _, s in snapshots if s.heldout_scored == 0)


def test_eta_seconds_prices_the_rest_of_the_binding_budget_at_the_runs_own_pace():
    from evolve.archive.vocab import JobKind
    from evolve.engine.costs import eta_seconds
    from evolve.search.spend import Spend

    # 60 s an evaluation, 600 s an expansion
    totals = {JobKind.EVALUATE: (10, 600.0), JobKind.EXPAND: (2, 1200.0)}
    hours = Spend(
        "cpu_hours",
        limit=2.0,
        spent=0.5,
        in_flight=0.1,
        reserve=0.2,
        evaluation_price=1 / 60,
        expansion_price=1 / 6,
    )
    assert eta_seconds(hours, totals, heldout_due=12, concurrency=1) == pytest.approx(
        (1.2 + 0.1) * 3600 + 12 * 60
    )
    assert eta_seconds(hours, totals, heldout_due=12, concurrency=2) == pytest.approx(
        ((1.2 + 0.1) * 3600 + 720) / 2
    )
    results = Spend(
        "evaluations", limit=40, spent=10, in_flight=1, reserve=0, evaluation_price=1, expansion_price=0
    )
    assert eta_seconds(results, totals, heldout_due=0, concurrency=1) == pytest.approx(30 * 1800 / 10)
    # the held-out scoring left
    assert eta_seconds(None, totals, heldout_due=5, concurrency=1) == pytest.approx(300)
    assert eta_seconds(results, {JobKind.EVALUATE: (0, 0.0), JobKind.EXPAND: (1, 60.0)}, 3, 1) is None
