"""Execution spectra in an expansion's diagnosis (`[meta] spectra`), on process sandboxes: the tiny agent of
spectra_cases, recorded passing one task and failing another, expanded by the engine worker with the
computed (`evidence`) diagnosis, once with spectra and once without."""

from __future__ import annotations

import json

from evolve.config import MetaConfig
from evolve.engine.expand import ExpandSettings
from evolve.engine.worker import EngineWorker, WorkerSettings
from evolve.llm.gateway import Gateway
from evolve.meta.modify import INSTRUCTIONS_JSON
from evolve.sandbox.factory import ProcessSandboxes
from evolve.standins.models import ScriptedModel
from tests.unit.engine.spectra_cases import FAILING_ONLY, SETTINGS, recorded_pair


def test_the_diagnosis_names_the_line_only_the_failing_replay_ran_and_counts_its_cost(tmp_path) -> None:
    run, node_id, tasks = recorded_pair(tmp_path)
    node = run.node(node_id)
    firsts, spectra = {}, {}
    for on in (1, 0):
        settings = WorkerSettings(eval=SETTINGS, expand=ExpandSettings(candidates=1),
                                  meta=MetaConfig(diagnosis="evidence", spectra=on))
        models = {"diagnose": ScriptedModel(["{}"]), "modify": ScriptedModel(["true"] * 4)}
        with Gateway(models, exchanges_dir=run.path / "exchanges") as gateway:
            worker = EngineWorker(run, tasks, gateway=gateway, settings=settings, seed=0, sandboxes=ProcessSandboxes())
            job = run.start_job("expand", node_id)
            worker.expand(job, node)
        log_dir = run.log_dir(job.id)
        firsts[on] = json.loads((log_dir / INSTRUCTIONS_JSON).read_text())["locations"][0]
        spectra[on] = json.loads((log_dir / "spectra.json").read_text()) if (log_dir / "spectra.json").is_file() else None
    run.close()
    with_spectra, without = firsts[1], firsts[0]
    assert (with_spectra["path"], with_spectra["line"]) == FAILING_ONLY
    assert with_spectra["score"] == 1.0 and "run by 1 of 1 failing replays" in with_spectra["evidence"]
    # the provenance of the failing run's request points at the same line, with its own evidence kept beside
    assert 'its text "the command failed" was sent' in with_spectra["evidence"]
    assert spectra[1] is not None and spectra[1]["replays"] == 2 and spectra[1]["sandboxes"] == 4
    assert spectra[1]["seconds"] > 0 and spectra[1]["error"] == ""
    # off: the provenance alone, as before, and nothing replayed
    assert (without["path"], without["line"]) == FAILING_ONLY and without["score"] < 1.0
    assert "failing replays" not in without["evidence"] and spectra[0] is None
