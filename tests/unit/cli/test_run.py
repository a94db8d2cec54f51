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
        out = capsys.readouterr().out
        assert "not scored on held-out tasks: the run was stopped" in out
        assert "stopped: stop requested" in out and "cost: " in out and "CPU-hours" in out


def test_the_report_puts_the_seeds_heldout_score_beside_the_final_agents(run, code, capsys):
    seed = run.add_node(code({"a.py": "0\n"}))
    child = run.add_node(code({"a.py": "1\n"}), parent=seed.id, origin="self_modify")
    for task, seed_outcome, child_outcome in (("h1", "fail", "pass"), ("h2", "pass", "pass"), ("h3", "infra", "fail")):
        run.record_evaluation(seed.id, task, seed_outcome, split="heldout")
        run.record_evaluation(child.id, task, child_outcome, split="heldout")
    for index in range(5):  # the dev results that make the child the policy's final agent
        run.record_evaluation(seed.id, f"d{index}", "fail")
        run.record_evaluation(child.id, f"d{index}", "pass")
    _report(run, RunOutcome("evaluation budget spent", child.id, 2, 3, 10, 2, heldout_scored=True, seed_node=seed.id))
    out = capsys.readouterr().out.splitlines()
    answer = out[out.index("final agent: node 1 (2/3 held-out passed, 67% [21%, 94%]; 5/5 dev)"):]
    assert answer[1] == ("seed vs final on 2 held-out tasks, paired: seed 1/2, final 2/2, difference +0.500 "
                         "[-0.273, +0.905] (95 %, Newcombe), exact McNemar p = 1")
    assert answer[2].startswith("  too few tasks to tell the agents apart: 1 of 2 paired tasks differ")
    assert answer[3].startswith("rule: HGM's best belief: the valid node with the highest 0.25-quantile")
    assert answer[4].startswith("cost: 0 tokens, $0.0000, 0.00 sandbox CPU-hours")
    assert answer[5] == "stopped: evaluation budget spent"
    assert f"paired in full: evolve compare {run.path}:0 {run.path}:1 --split heldout" in out
    _report(run, RunOutcome("evaluation budget spent", seed.id, 1, 3, 10, 2, heldout_scored=True))
    assert "paired in full" not in capsys.readouterr().out  # the seed is the final agent: the runner names no seed
