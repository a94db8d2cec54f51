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


def test_the_report_puts_the_seeds_heldout_score_beside_the_final_agents(run, code, capsys):
    seed = run.add_node(code({"a.py": "0\n"}))
    child = run.add_node(code({"a.py": "1\n"}), parent=seed.id, origin="self_modify")
    for task, seed_outcome, child_outcome in (("h1", "fail", "pass"), ("h2", "pass", "pass"), ("h3", "infra", "fail")):
        run.record_evaluation(seed.id, task, seed_outcome, split="heldout")
        run.record_evaluation(child.id, task, child_outcome, split="heldout")
    _report(run, RunOutcome("evaluation budget spent", child.id, 2, 3, 10, 2, heldout_scored=True, seed_node=seed.id))
    out = capsys.readouterr().out
    assert "best agent: node 1 (2/3 held-out tasks passed)" in out
    assert f"seed: node 0 (1/2 held-out tasks passed; paired: evolve compare {run.path}:0 {run.path}:1 --split heldout)" in out
    _report(run, RunOutcome("evaluation budget spent", seed.id, 1, 3, 10, 2, heldout_scored=True))
    assert "seed: node" not in capsys.readouterr().out  # the seed is the final agent: the runner names no seed
