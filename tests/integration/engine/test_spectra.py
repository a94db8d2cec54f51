"""Execution spectra in Docker (evolve.engine.spectra): a tiny agent, not the seed, recorded passing one task
and failing another, replayed under coverage in real sandboxes with every model reply from its recording."""

from __future__ import annotations

from evolve.archive.store import Run
from evolve.engine.context import JobContext
from evolve.engine.spectra import Spectra, SpectraResult, spectra_locations, spectra_replays
from evolve.llm.gateway import Gateway
from evolve.sandbox.factory import DockerSandboxes
from tests.unit.engine.spectra_cases import CALC, FAILING_ONLY, RUNS_COMMAND, SETTINGS, TESTS, recorded_pair


def _docker(run: Run) -> DockerSandboxes:
    return DockerSandboxes(run.id)


def test_replays_under_coverage_rank_the_line_only_the_failure_ran_first(tmp_path, base_image) -> None:
    run, node, tasks = recorded_pair(tmp_path, _docker)
    assert sorted(e.outcome for e in run.evaluations(node)) == ["fail", "pass"]
    replays = spectra_replays(run, node, tasks)
    code = run.checkout(node, tmp_path / "code")
    with Gateway(replay_from=tmp_path) as unused:  # every replay opens a gateway of its own
        ctx = JobContext("spectra", node, code, tmp_path / "logs", _docker(run), unused)
        ranked, _ = spectra_locations(ctx, replays, SETTINGS)
    run.close()
    assert ranked, [p.read_text() for p in (tmp_path / "logs").glob("spectra-*/agent.log")]
    assert (ranked[0].path, ranked[0].line) == FAILING_ONLY
    assert "run by 1 of 1 failing replays and 0 of 1 passing" in ranked[0].evidence
    shared = next(location for location in ranked if (location.path, location.line) == RUNS_COMMAND)
    assert '; as the failing replay of fails ran it: command = "python3 -c ' in shared.evidence


def test_the_agents_own_tests_rank_the_line_only_its_failing_test_runs_first(tmp_path, base_image) -> None:
    result = own_tests_in_a_container(
        tmp_path,
        base_image,
        "def add(a, b):\n    if a > 10:\n        return a - b\n    return a + b\n",
        "from agent.calc import add\n\n\ndef test_small():\n    assert add(1, 2) == 3\n\n\n"
        "def test_large():\n    assert add(11, 2) == 13\n",
    )
    assert result.error == "" and result.failing_tests == ("tests/test_calc.py::test_large",)
    assert (result.locations[0].path, result.locations[0].line) == ("agent/calc.py", 3)
    assert "(assert 9 == 13)" in result.locations[0].evidence
    assert result.locations[0].evidence.endswith("ran it: a = 11, b = 2")  # the image's Python reads values


def test_the_screen_keeps_the_edit_that_makes_every_own_test_pass_in_a_container(
    tmp_path, base_image
) -> None:
    # The tiny calc agent of tests/unit/engine/test_screen.py: its fault is a line the passing test runs too.
    result = own_tests_in_a_container(tmp_path, base_image, CALC, TESTS, screen=40)
    assert result.error == "" and result.screen.error == "", result
    assert [(g.edit.line, g.edit.change) for g in result.screen.kept] == [(4, "- -> +")]
    first = result.locations[0]
    assert (first.path, first.line, first.score) == ("agent/calc.py", 4, 2.0)


def own_tests_in_a_container(
    tmp_path, image: str, calc: str, tests: str, *, screen: int = 0
) -> SpectraResult:
    """The Spectra work's own-test result, in Docker, for the recorded pair's agent with `agent/calc.py` and
    `tests/test_calc.py` as given (`screen` edits screened)."""
    run, node, _ = recorded_pair(tmp_path, _docker)
    code = run.checkout(node, tmp_path / "code")
    (code / "agent" / "calc.py").write_text(calc)
    (code / "tests").mkdir(exist_ok=True)
    (code / "tests" / "test_calc.py").write_text(tests)
    (tmp_path / "logs").mkdir()
    with Gateway(replay_from=tmp_path) as unused:  # no model: the tests ask none
        ctx = JobContext("spectra", node, code, tmp_path / "logs", _docker(run), unused)
        result = Spectra((), SETTINGS, tests_image=image, screen=screen)(ctx)
    run.close()
    return result
