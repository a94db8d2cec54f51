"""Execution spectra in an expansion's diagnosis (`[meta] spectra`), on process sandboxes: the tiny agent of
spectra_cases, recorded passing one task and failing another, expanded by the engine worker with the
computed (`evidence`) diagnosis, once with spectra and once without."""

from __future__ import annotations

import json
import pickle
from concurrent.futures import Future

from evolve.cluster.head import cluster_worker
from evolve.cluster.node import run_shipped
from evolve.config import MetaConfig
from evolve.engine.expand import ExpandSettings, Expansion
from evolve.engine.jobs import ExpansionResult
from evolve.engine.worker import EngineWorker, Here, WorkerSettings
from evolve.llm.gateway import Gateway
from evolve.meta.modify import INSTRUCTIONS_JSON
from evolve.sandbox.factory import ProcessSandboxes
from evolve.standins.models import ScriptedModel
from tests.unit.engine.spectra_cases import BREAK, FAILING_ONLY, RUNS_COMMAND, SETTINGS, recorded_pair


def test_the_diagnosis_names_the_line_only_the_failing_replay_ran_and_counts_its_cost(tmp_path) -> None:
    run, node_id, tasks = recorded_pair(tmp_path)
    node = run.node(node_id)
    firsts, spectra, ranked = {}, {}, {}
    for on in (1, 0):
        settings = WorkerSettings(
            eval=SETTINGS,
            expand=ExpandSettings(candidates=1),
            meta=MetaConfig(diagnosis="evidence", spectra=on),
        )
        models = {"diagnose": ScriptedModel(["{}"]), "modify": ScriptedModel(["true"] * 4)}
        with Gateway(models, exchanges_dir=run.path / "exchanges") as gateway:
            worker = EngineWorker(
                run, tasks, gateway=gateway, settings=settings, seed=0, sandboxes=ProcessSandboxes()
            )
            job = run.start_job("expand", node_id)
            worker.expand(job, node)
        log_dir = run.log_dir(job.id)
        ranked[on] = json.loads((log_dir / INSTRUCTIONS_JSON).read_text())["locations"]
        firsts[on] = ranked[on][0]
        spectra[on] = (
            json.loads((log_dir / "spectra.json").read_text())
            if (log_dir / "spectra.json").is_file()
            else None
        )
    run.close()
    with_spectra, without = firsts[1], firsts[0]
    assert (with_spectra["path"], with_spectra["line"]) == FAILING_ONLY
    assert with_spectra["score"] == 1.0 and "run by 1 of 1 failing replays" in with_spectra["evidence"]
    # the provenance of the failing run's request points at the same line, with its own evidence kept beside
    assert 'its text "the command failed" was sent' in with_spectra["evidence"]
    # the line that ran the model's command: it failed, and the probe recorded what it ran and printed
    (runs,) = [loc for loc in ranked[1] if (loc["path"], loc["line"]) == RUNS_COMMAND]
    assert (
        "1 of the 1 commands it ran in failing replays exited non-zero "
        "(1× \"AttributeError: module 'calc' has no attribute 'subtract'\", "
        f'e.g. from "bash -c {BREAK}")' in runs["evidence"]
    ), runs
    # two replays (a solve and a grading sandbox each) and one run of the agent's own tests (it has none)
    assert spectra[1] is not None and spectra[1]["replays"] == 2 and spectra[1]["sandboxes"] == 5
    assert spectra[1]["tests"] == 0 and spectra[1]["failing_tests"] == []
    assert spectra[1]["seconds"] > 0 and spectra[1]["error"] == ""
    assert spectra[1]["traced"] == ["fails"]  # the failing replay's lines, kept to choose behaviour replays
    # off: the provenance alone, as before, and nothing replayed
    assert (without["path"], without["line"]) == FAILING_ONLY and without["score"] < 1.0
    assert "failing replays" not in without["evidence"] and spectra[0] is None


class InProcess:
    """A cluster of one node here: each shipped job crosses a pickle round trip, as it would to a Ray node."""

    def submit(self, fn, payload) -> Future:
        assert fn is run_shipped  # the worker node's own entry
        future: Future = Future()
        future.set_result(pickle.loads(pickle.dumps(fn(pickle.loads(pickle.dumps(payload))))))
        return future


def test_a_cluster_worker_runs_the_spectra_by_the_same_path(tmp_path) -> None:
    run, node_id, tasks = recorded_pair(tmp_path)
    settings = WorkerSettings(eval=SETTINGS, meta=MetaConfig(diagnosis="evidence", spectra=1))
    with Gateway({"diagnose": ScriptedModel(["{}"])}) as gateway:
        worker = cluster_worker(
            run,
            tasks,
            gateway=gateway,
            gateway_origin="http://head:1",
            cluster=InProcess(),
            settings=settings,
            sandboxes=ProcessSandboxes(),
            seed=0,
        )
        job = run.start_job("expand", node_id)
        ranked = worker._spectra(job, run.node(node_id)).locations
    log_dir = run.log_dir(job.id)
    run.close()
    assert (ranked[0].path, ranked[0].line) == FAILING_ONLY and ranked[0].score == 1.0
    assert (log_dir / "spectra-1" / "coverage-lines").is_file()  # the node's logs came back to the run
    attempts = [json.loads(line) for line in (log_dir / "attempts.jsonl").read_text().splitlines()]
    assert [(a["work"], a["attempt"]) for a in attempts] == [("spectra", 0)]
    assert json.loads((log_dir / "spectra.json").read_text())["replays"] == 2


class Captured(Here):
    """Works here, but keeps each expansion it is given instead of running it."""

    def __init__(self, *args) -> None:
        super().__init__(*args)
        self.expansions: list[Expansion] = []

    def run_work(self, job, node, work):
        if isinstance(work, Expansion):
            self.expansions.append(work)
            return ExpansionResult(None, valid=False, reason="captured"), "here"
        return super().run_work(job, node, work)


def test_the_expansions_failed_replays_carry_the_lines_the_spectra_traced_on_them(tmp_path) -> None:
    run, node_id, tasks = recorded_pair(tmp_path)
    settings = WorkerSettings(
        eval=SETTINGS,
        expand=ExpandSettings(candidates=1, replays=1),
        meta=MetaConfig(diagnosis="evidence", spectra=1),
    )
    with Gateway({"diagnose": ScriptedModel(["{}"])}, exchanges_dir=run.path / "exchanges") as gateway:
        place = Captured(run, ProcessSandboxes(), gateway)
        worker = EngineWorker(run, tasks, gateway=gateway, settings=settings, seed=0, place=place)
        job = run.start_job("expand", node_id)
        worker.expand(job, run.node(node_id))
    run.close()
    (expansion,) = place.expansions
    (replay,) = expansion.replays
    assert replay.task.id == "fails" and replay.ran is not None
    assert FAILING_ONLY in replay.ran and RUNS_COMMAND in replay.ran
