"""`evolve run`: the report of how a run ended, and a resume that changes the run's budget."""

from __future__ import annotations

import re

import pytest

from evolve.archive import Run
from evolve.archive.vocab import StopReason
from evolve.cli.run import _report
from evolve.cli.run import run as run_command
from evolve.engine.outcome import RunOutcome
from tests.unit.archive.test_schema import v2_run


def test_the_report_says_why_the_best_agent_was_not_scored(tmp_path, capsys):
    with Run.open(v2_run(tmp_path)) as run:
        refused = RunOutcome(
            "the model provider refused the engine's key or account: invalid x-api-key",
            "0",
            0,
            3,
            12,
            5,
            stop=StopReason.MODEL_REFUSED,
        )
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
    for task, seed_outcome, child_outcome in (
        ("h1", "fail", "pass"),
        ("h2", "pass", "pass"),
        ("h3", "infra", "fail"),
    ):
        run.record_evaluation(seed.id, task, seed_outcome, split="heldout")
        run.record_evaluation(child.id, task, child_outcome, split="heldout")
    for index in range(5):  # the dev results that make the child the policy's final agent
        run.record_evaluation(seed.id, f"d{index}", "fail")
        run.record_evaluation(child.id, f"d{index}", "pass")
    _report(
        run,
        RunOutcome("evaluation budget spent", child.id, 2, 3, 10, 2, heldout_scored=True, seed_node=seed.id),
    )
    out = capsys.readouterr().out.splitlines()
    answer = out[out.index("final agent: node 1 (2/3 held-out passed, 67% [21%, 94%]; 5/5 dev)") :]
    assert answer[1] == (
        "seed vs final on 2 held-out tasks, paired: seed 1/2, final 2/2, difference +0.500 "
        "[-0.273, +0.905] (95 %, Newcombe), exact McNemar p = 1"
    )
    assert answer[2].startswith("  too few tasks to tell the agents apart: 1 of 2 paired tasks differ")
    assert answer[3].startswith("rule: HGM's best belief: the valid node with the highest 0.25-quantile")
    assert answer[4].startswith("cost: 0 tokens, $0.0000, 0.00 sandbox CPU-hours")
    assert answer[5] == "stopped: evaluation budget spent"
    assert f"paired in full: evolve compare {run.path}:0 {run.path}:1 --split heldout" in out
    _report(run, RunOutcome("evaluation budget spent", seed.id, 1, 3, 10, 2, heldout_scored=True))
    # the seed is the final agent: the runner names no seed
    assert "paired in full" not in capsys.readouterr().out


def _resumed(monkeypatch) -> list:
    """What `evolve run --resume` hands the runner (the run itself is not driven here)."""
    handed = []
    monkeypatch.setattr(
        "evolve.cli.run._execute", lambda config, resume, report=None: handed.append((config, resume))
    )
    return handed


def test_a_resume_changes_the_runs_budget_and_keeps_the_old_one_on_record(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from evolve.cli.app import app
    from evolve.config import BudgetConfig, RunConfig

    path = tmp_path / "run"
    Run.create(path, RunConfig(budget=BudgetConfig(evaluations=150, expansions=12))).close()
    handed = _resumed(monkeypatch)
    result = CliRunner().invoke(
        app, ["run", "--resume", str(path), "--budget", "cpu_hours=5.5", "--budget", "budget.evaluations=90"]
    )
    assert result.exit_code == 0, result.output
    assert (
        "budget.cpu_hours: no limit -> 5.5" in result.output
        and "budget.evaluations: 150 -> 90" in result.output
    )
    ((config, resume),) = handed
    assert resume == path and (config.budget.cpu_hours, config.budget.evaluations) == (5.5, 90)
    with Run.open(path) as run:
        assert (run.config.budget.cpu_hours, run.config.budget.evaluations, run.config.budget.expansions) == (
            5.5,
            90,
            12,
        )
        (change,) = run.budget_changes()
        assert change["changes"] == {"cpu_hours": [None, 5.5], "evaluations": [150, 90]}
    assert (
        CliRunner().invoke(app, ["run", "--resume", str(path), "--budget", "cpu_hours=none"]).exit_code == 0
    )
    with Run.open(path) as run:
        assert run.config.budget.cpu_hours is None
        assert [c["changes"] for c in run.budget_changes()][1] == {"cpu_hours": [5.5, None]}
    # no change: nothing recorded
    assert CliRunner().invoke(app, ["run", "--resume", str(path)]).exit_code == 0
    with Run.open(path) as run:
        assert len(run.budget_changes()) == 2


@pytest.mark.parametrize(
    ("assignment", "says"),
    [
        ("cpu_hour=5", "no budget `cpu_hour` (one of: evaluations, expansions"),
        ("cpu_hours", "expected NAME=VALUE"),
        ("cpu_hours=five", "'five' is not a number"),
        ("cpu_hours=-1", "key `budget.cpu_hours`: Input should be greater than 0 (got -1)"),
        ("evaluations=none", "budget.evaluations cannot be none"),
    ],
)
def test_a_bad_budget_change_is_one_line_and_changes_nothing(tmp_path, monkeypatch, assignment, says):
    from evolve.config import ConfigError, RunConfig

    path = tmp_path / "run"
    Run.create(path, RunConfig()).close()
    before = (path / "run.toml").read_text()
    handed = _resumed(monkeypatch)
    with pytest.raises(ConfigError, match=re.escape(says)):
        run_command(resume=path, budget=[assignment])
    assert (path / "run.toml").read_text() == before and not handed
    with Run.open(path) as run:
        assert run.budget_changes() == []


def test_a_new_runs_budget_is_its_configs(tmp_path):
    from evolve.errors import EvolveError

    with pytest.raises(EvolveError, match=r"--budget changes a stopped run's budget \(with --resume\)"):
        run_command(config=tmp_path / "run.toml", budget=["evaluations=5"])


def test_the_report_shows_the_budget_as_changed_on_resume(tmp_path, monkeypatch):
    from evolve.notebook import build_example_run
    from evolve.report import collect

    path = tmp_path / "run"
    build_example_run(path).close()
    _resumed(monkeypatch)
    run_command(resume=path, budget=["cpu_hours=2.5", "evaluations=70"])
    with Run.open(path) as run:
        rows = dict(collect(run).budget)
    assert rows["evaluations"].endswith(" of 70") and re.fullmatch(r"\d+\.\d\d of 2\.5", rows["CPU-hours"])
    (changed,) = [value for key, value in rows.items() if key.startswith("changed ")]
    assert re.search(r"cpu_hours no limit → 2\.5, evaluations \d+ → 70", changed)
