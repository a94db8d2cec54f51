"""`evolve plan` and the plan's line and confirmation in `evolve run`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from evolve.cli.run import _confirm_plan
from evolve.config import parse_config
from evolve.errors import EvolveError

CONFIGS = Path(__file__).resolve().parents[3] / "evolve" / "configs"
PRICED = """
[run]
name = "priced"
archive_dir = "{archive}"
[models.solve]
provider = "openai"
model = "gpt-5-mini"
[tasks]
suite = "builtin"
[budget]
evaluations = 50
[plan]
confirm_above_dollars = {limit}
"""


def _evolve(*args: str, stdin=subprocess.DEVNULL) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "evolve", *args],
        capture_output=True,
        text=True,
        stdin=stdin,
        check=False,
        timeout=120,
    )


def test_plan_json_has_the_counts_and_the_cost():
    done = _evolve("plan", str(CONFIGS / "hgm-swebench60.toml"), "--json", "--offline")
    assert done.returncode == 0, done.stderr
    plan = json.loads(done.stdout)
    assert plan["evaluations"] == {"search": 800, "heldout": 12, "total": 812} and plan["expansions"] == 55
    assert plan["dollars"] == pytest.approx(sum(r["dollars"] for r in plan["roles"]), abs=1e-3)
    assert plan["images"]["names"][0] == "evolve-base:latest" and len(plan["images"]["names"]) == 61
    assert plan["checked"] is False


def test_run_refuses_without_a_terminal_when_the_plan_is_over_the_threshold(tmp_path):
    config = tmp_path / "priced.toml"
    config.write_text(PRICED.format(archive=tmp_path / "archive", limit=0.01))
    done = _evolve("run", str(config))
    assert done.returncode == 1
    assert done.stdout.startswith("plan: 60 evaluations")  # the one-line summary comes first
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "confirm_above_dollars" in lines[0] and "--yes" in lines[0]
    assert not (tmp_path / "archive").exists()  # nothing was started


def test_run_goes_on_with_yes_or_under_the_threshold(tmp_path, capsys):
    over = parse_config(PRICED.format(archive=tmp_path, limit=0.01))
    with pytest.raises(EvolveError, match="--yes"):
        _confirm_plan(over, yes=False)
    _confirm_plan(over, yes=True)
    assert capsys.readouterr().out.startswith("plan: ")
    _confirm_plan(parse_config(PRICED.format(archive=tmp_path, limit=1000.0)), yes=False)
    never = parse_config(
        PRICED.format(archive=tmp_path, limit=0.01).replace("confirm_above_dollars = 0.01", "")
    )
    assert never.plan.confirm_above_dollars == 25.0
