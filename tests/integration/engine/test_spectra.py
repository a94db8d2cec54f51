"""Execution spectra in Docker (evolve.engine.spectra): a tiny agent, not the seed, recorded passing one task
and failing another, replayed under coverage in real sandboxes with every model reply from its recording."""

from __future__ import annotations

from evolve.archive.store import Run
from evolve.engine.context import JobContext
from evolve.engine.spectra import spectra_locations, spectra_replays
from evolve.llm.gateway import Gateway
from evolve.sandbox.factory import DockerSandboxes
from tests.unit.engine.spectra_cases import FAILING_ONLY, SETTINGS, recorded_pair


def _docker(run: Run) -> DockerSandboxes:
    return DockerSandboxes(run.id)


def test_replays_under_coverage_rank_the_line_only_the_failure_ran_first(tmp_path, base_image) -> None:
    run, node, tasks = recorded_pair(tmp_path, _docker)
    assert sorted(e.outcome for e in run.evaluations(node)) == ["fail", "pass"]
    replays = spectra_replays(run, node, tasks)
    code = run.checkout(node, tmp_path / "code")
    with Gateway(replay_from=tmp_path) as unused:  # every replay opens a gateway of its own
        ctx = JobContext("spectra", node, code, tmp_path / "logs", _docker(run), unused)
        ranked = spectra_locations(ctx, replays, SETTINGS)
    run.close()
    assert ranked, [p.read_text() for p in (tmp_path / "logs").glob("spectra-*/agent.log")]
    assert (ranked[0].path, ranked[0].line) == FAILING_ONLY
    assert "run by 1 of 1 failing replays and 0 of 1 passing" in ranked[0].evidence
