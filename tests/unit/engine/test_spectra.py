"""Execution spectra of an agent on a replayed pair (evolve.engine.spectra), on process sandboxes: the tiny
agent of spectra_cases, recorded passing one task and failing another, re-run under coverage with every
model reply from its recording."""

from __future__ import annotations

from evolve.engine.context import JobContext
from evolve.engine.evaluate import EvalSettings
from evolve.engine.spectra import spectra_locations, spectra_replays
from evolve.llm.gateway import Gateway
from evolve.sandbox.factory import ProcessSandboxes
from tests.unit.engine.spectra_cases import FAILING_ONLY, RUNS_COMMAND, recorded_pair


def test_the_line_only_the_failing_replay_runs_ranks_first(tmp_path) -> None:
    run, node, tasks = recorded_pair(tmp_path)
    replays = spectra_replays(run, node, tasks)
    assert [(r.task.id, r.outcome) for r in replays] == [("fails", "fail"), ("passes", "pass")]
    code = run.checkout(node, tmp_path / "code")
    with Gateway(replay_from=tmp_path) as unused:  # every replay opens a gateway of its own
        ctx = JobContext("spectra", node, code, tmp_path / "logs", ProcessSandboxes(), unused)
        ranked = spectra_locations(ctx, replays, EvalSettings(budget_steps=3, infra_retries=0))
    run.close()
    first = ranked[0]
    assert (first.path, first.line) == FAILING_ONLY
    assert first.score == 1.0 and "run by 1 of 1 failing replays and 0 of 1 passing" in first.evidence
    by_line = {(location.path, location.line): location for location in ranked}
    shared = by_line[RUNS_COMMAND]  # run by both replays: ranked below, with what its command's output came to
    assert shared.score < first.score
    assert "incl. 1 traceback" in shared.evidence and ", 0 reached the model" in shared.evidence
    assert all(location.path == "agent/__main__.py" for location in ranked)  # the agent's files only
