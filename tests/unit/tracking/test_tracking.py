"""A scripted evolution followed in the real trackers (W&B offline files, an MLflow store) and checked
against the archive; a tracker that raises leaves the run to finish; a resume continues the tracked run."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from evolve.archive.best import run_best
from evolve.archive.vocab import StopReason
from evolve.config import BudgetConfig, TrackingConfig
from evolve.engine.events import Evaluated
from evolve.engine.executors import LocalExecutor
from evolve.engine.runner import Runner
from evolve.search import HGMPolicy
from evolve.standins.worker import ScriptedWorker
from evolve.tracking import Step, open_tracking, trackers_of
from tests.unit.engine.conftest import HELDOUT, TASKS, seeded_run
from tests.unit.tracking.wandb_files import history, offline_files

wandb = pytest.importorskip("wandb", reason="the tracking extra: pip install 'evolve[tracking]'")
mlflow = pytest.importorskip("mlflow", reason="the tracking extra: pip install 'evolve[tracking]'")


def tracked_session(run, config: TrackingConfig, evaluations: int, trackers=None):
    executor = LocalExecutor(2)
    try:
        with open_tracking(config, run, cpus=2.0, trackers=trackers) as tracking:
            runner = Runner(
                run,
                HGMPolicy(),
                ScriptedWorker(run, tokens_per_job=50),
                executor,
                search_tasks=TASKS,
                heldout_tasks=HELDOUT,
                budget=BudgetConfig(evaluations=evaluations),
                concurrency=2,
                seed=3,
                events=tracking,
            )
            return runner.execute()
    finally:
        executor.shutdown(cancel_pending=True)


def test_the_trackers_receive_every_result_and_a_resume_continues_the_same_tracked_run(tmp_path):
    run = seeded_run(tmp_path / "run")
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    config = TrackingConfig.model_validate(
        {
            "wandb": {"enabled": True, "mode": "offline"},
            "mlflow": {"enabled": True, "uri": uri, "experiment": "tests"},
        }
    )
    # A store without a server keeps artifacts where its experiment says (default: ./mlruns, in the checkout).
    mlflow.MlflowClient(tracking_uri=uri).create_experiment(
        "tests", artifact_location=str(tmp_path / "artifacts")
    )
    tracked_session(run, config, evaluations=12)
    wandb_id = (run.path / "tracking" / "wandb.id").read_text().strip()
    mlflow_id = (run.path / "tracking" / "mlflow.id").read_text().strip()
    tracked_session(run, config, evaluations=20)  # a resume with more budget: the same tracked runs
    assert (run.path / "tracking" / "wandb.id").read_text().strip() == wandb_id
    assert (run.path / "tracking" / "mlflow.id").read_text().strip() == mlflow_id

    rows = [row for path in offline_files(run.path / "tracking" / "wandb", wandb_id) for row in history(path)]
    evaluations = run.evaluations()
    assert sorted(
        (r["evaluation/node"], r["evaluation/task"], r["evaluation/split"], r["evaluation/outcome"])
        for r in rows
        if "evaluation/node" in r
    ) == sorted((e.node, e.task, str(e.split), str(e.outcome)) for e in evaluations)
    assert sorted(
        (r["expansion/parent"], r["expansion/child"]) for r in rows if "expansion/child" in r
    ) == sorted((n.parent, n.id) for n in run.nodes() if n.parent is not None)
    assert all(r["evaluation/tokens"] == 50 for r in rows if "evaluation/node" in r)
    steps = [r["_step"] for r in rows]
    assert steps == sorted(steps) and len(set(steps)) == len(steps)  # the resume went on from the last step
    last = rows[-1]
    best = run_best(run)
    assert best is not None and last["best/node"] == best.node and last["final/node"] == best.node
    assert last["best/pass_rate"] == pytest.approx(best.successes / best.total)
    assert last["run/tokens"] == run.usage_totals()[0]
    assert last["run/expansions"] == len(run.nodes()) - 1
    assert last["run/cpu_hours"] > 0 and "clade/pass_rate" in rows[-2]

    client = mlflow.MlflowClient(tracking_uri=uri)
    passed = client.get_metric_history(mlflow_id, "evaluation/passed")
    assert sorted(m.value for m in passed) == sorted(float(e.outcome == "pass") for e in evaluations)
    assert client.get_run(mlflow_id).data.metrics["run/dollars"] == pytest.approx(run.usage_totals()[1])
    artifacts = {a.path for a in client.list_artifacts(mlflow_id)}
    assert {"run.toml", "report.html", "run.evolve.tar.gz", "events.jsonl"} <= artifacts
    assert client.get_run(mlflow_id).info.status == "FINISHED"


class Raising:
    name = "raising"

    def start(self, resume_id):
        return "r1"

    def log(self, step: Step) -> None:
        raise ConnectionError("the tracker's server went away\nsecond line")

    def upload(self, files) -> None:
        raise AssertionError("a failed tracker is sent nothing more")

    def finish(self) -> None:
        raise AssertionError("a failed tracker is sent nothing more")


class Recording:
    name = "recording"

    def __init__(self) -> None:
        self.steps: list[Step] = []
        self.files: list[str] = []
        self.finished = False

    def start(self, resume_id):
        return "rec"

    def log(self, step: Step) -> None:
        self.steps.append(step)

    def upload(self, files) -> None:
        self.files = [Path(f).name for f in files]

    def finish(self) -> None:
        self.finished = True


def test_a_tracker_that_raises_is_one_warning_and_the_run_goes_on(tmp_path, caplog):
    run = seeded_run(tmp_path / "run")
    recording = Recording()
    with caplog.at_level(logging.WARNING, logger="evolve.tracking"):
        outcome = tracked_session(run, TrackingConfig(), evaluations=10, trackers=[Raising(), recording])
    assert outcome.stop == StopReason.EVALUATION_BUDGET and outcome.evaluations_used == 10
    warnings = [r.getMessage() for r in caplog.records if r.name.startswith("evolve.tracking")]
    assert warnings == [
        (
            "tracking: raising failed (ConnectionError: the tracker's server went away); "
            "the run goes on without it"
        )
    ]
    assert len(recording.steps) == len(run.evaluations()) + len(run.nodes()) - 1 + 1  # and the end
    assert recording.finished and {"run.toml", "report.html", "events.jsonl"} <= set(recording.files)
    logged = [json.loads(line) for line in (run.path / "tracking" / "events.jsonl").read_text().splitlines()]
    assert [row["step"] for row in logged] == [step.step for step in recording.steps]


def test_two_events_read_at_one_count_are_two_steps_and_a_resume_goes_on_after_the_last(tmp_path):
    """W&B merges what is logged at one step: two results recorded before the first of their events is
    read must not share a step, nor may a resume send a step at or below one sent before."""
    run = seeded_run(tmp_path / "run")
    tracked_session(run, TrackingConfig(), evaluations=6, trackers=[Recording()])
    first = run.evaluations()[-1]
    job = next(j for j in run.jobs() if j.kind == "evaluate")
    event = Evaluated(job, first.node, first.task, first.split, first.outcome, 0, 0.0)
    events = run.path / "tracking" / "events.jsonl"
    sent = [json.loads(line)["step"] for line in events.read_text().splitlines()]
    for _ in range(2):  # each a session of its own: the second resumes after the first's last step
        recording = Recording()
        with open_tracking(TrackingConfig(), run, cpus=1.0, trackers=[recording]) as tracking:
            assert tracking is not None
            tracking.record(event)
            tracking.record(event)
        sent += [step.step for step in recording.steps]
    assert sent == sorted(set(sent)) and len(sent) == len(run.evaluations()) + len(run.nodes()) - 1 + 1 + 4


def test_no_tracker_is_on_by_default(tmp_path):
    run = seeded_run(tmp_path / "run")
    assert trackers_of(TrackingConfig(), run) == []
    with open_tracking(TrackingConfig(), run, cpus=1.0) as tracking:
        assert tracking is None
