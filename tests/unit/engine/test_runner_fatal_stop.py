"""The runner's hook for a reason the run cannot go on (the gateway's refused engine key)."""

from __future__ import annotations

from evolve.archive.vocab import StopReason
from evolve.config import BudgetConfig


def test_the_runner_stops_with_the_gateways_one_line_reason(make_runner):
    runner, run, _ = make_runner(budget=BudgetConfig(evaluations=30))
    reasons = iter([None, None])
    runner.fatal = lambda: next(
        reasons, "the model provider refused the engine's key or account: invalid x-api-key"
    )
    outcome = runner.execute()
    assert outcome.stop_reason == "the model provider refused the engine's key or account: invalid x-api-key"
    assert outcome.stop == StopReason.MODEL_REFUSED
    assert run.evaluations()  # what was recorded before the stop stays
    assert not outcome.heldout_scored  # the held-out tasks would only meet the same refused key
