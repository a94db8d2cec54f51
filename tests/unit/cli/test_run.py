"""`evolve run`'s report of how a run ended."""

from __future__ import annotations

from evolve.archive import Run
from evolve.archive.vocab import StopReason
from evolve.cli.run import _report
from evolve.engine.outcome import RunOutcome
from tests.unit.archive.test_schema import v2_run


def test_the_report_says_why_the_best_agent_was_not_scored(tmp_path, capsys):
    with Run.open(v2_run(tmp_path)) as run:
        refused = RunOutcome("the model provider refused the engine's key or account: invalid x-api-key",
                             "0", 0, 3, 12, 5, stop=StopReason.MODEL_REFUSED)
        _report(run, refused)
        out = capsys.readouterr().out
        assert "stopped: the model provider refused the engine's key or account" in out
        assert "not scored on held-out tasks: no model could be reached; `evolve run --resume" in out
        _report(run, RunOutcome("stop requested", "0", 0, 3, 12, 5, stop=StopReason.STOP_REQUESTED))
        assert "not scored on held-out tasks: the run was stopped" in capsys.readouterr().out
