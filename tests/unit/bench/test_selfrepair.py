"""`evolve bench selfrepair`'s parts that need no model: each planted defect changes one place of the bundled
seed and leaves an agent that still compiles, and the recovered fraction with its paired interval."""

from __future__ import annotations

import ast

import numpy as np
import pytest

from evolve.bench.selfrepair import DEFECTS, Defect, plant, recovered_fraction
from evolve.errors import EvolveError
from evolve.seed import seed_dir


def test_there_are_at_least_five_defects_and_the_default_set_is_five_of_them():
    from evolve.bench.selfrepair import DEFAULT

    assert len(DEFECTS) >= 5 and len(DEFAULT) == 5 and set(DEFAULT) <= set(DEFECTS)


@pytest.mark.parametrize("name", sorted(DEFECTS))
def test_each_defect_changes_one_place_of_the_seed_and_the_agent_still_parses(name, tmp_path):
    defect = DEFECTS[name]
    copy = plant(defect, None, tmp_path / name)
    changed = [p.relative_to(copy).as_posix() for p in sorted(copy.rglob("*.py"))
               if p.read_bytes() != (seed_dir() / p.relative_to(copy)).read_bytes()]
    assert changed == [defect.path]
    text = (copy / defect.path).read_text()
    assert defect.new in text and defect.old not in text
    ast.parse(text)


def test_a_defect_whose_place_is_gone_is_refused_in_one_line(tmp_path):
    with pytest.raises(EvolveError, match="occurs 0 times, not once"):
        plant(Defect("agent/loop.py", "no such text", "x", "gone"), None, tmp_path / "x")


def test_the_recovered_fraction_and_its_interval():
    rng = np.random.default_rng(0)
    reference = [True] * 8 + [False] * 2
    defective = [False] * 8 + [False] * 2
    half = [True] * 4 + [False] * 6
    fraction, (low, high) = recovered_fraction(reference, defective, half, rng)
    assert fraction == pytest.approx(0.5) and low < 0.5 < high <= 1.0
    assert recovered_fraction(reference, defective, reference, rng)[0] == pytest.approx(1.0)
    assert recovered_fraction(reference, reference, reference, rng) == (None, None)  # no drop: undefined


def test_a_run_stopped_by_a_signal_stops_the_bench_instead_of_scoring_nothing(tmp_path, monkeypatch):
    """A SIGTERM cancels the short evolution; its held-out scores are missing, and a line of "0 tasks, no
    drop" would read as a measurement."""
    import evolve.launch
    from evolve.bench.selfrepair import SelfRepair
    from evolve.config import load_config
    from evolve.engine.outcome import RunOutcome

    class Stopped:
        path = tmp_path / "run"
        closed = False

        def close(self):
            Stopped.closed = True

    outcome = RunOutcome("cancelled", None, 0, 0, 3, 1, signal=15)
    monkeypatch.setattr(evolve.launch, "run_evolution", lambda config, models=None: (Stopped(), outcome))
    config = load_config(seed_dir().parents[0] / "configs" / "selfrepair.toml")
    with pytest.raises(EvolveError, match=r"reply-cut: the run was stopped by signal 15 before it was scored"):
        SelfRepair(config, tmp_path).recover("reply-cut", tmp_path / "agent", {"t": True})
    assert Stopped.closed


def test_the_totals_answer_the_goal_over_the_set():
    from evolve.bench.selfrepair import Recovery, totals

    def one(name, fraction, code, expansions):
        return Recovery(name, "r", 16, 0.75, 0.0, 0.5, fraction, None, code, expansions, 100, 60.0, "1",
                        "a node passed every search task (node 1, 6 of 6; `[budget] stop_when_solved`)")

    found = totals([one("a", 0.5, 1, 1), one("b", 0.49, 0, 2), one("c", None, 0, 0)], 600.04)
    assert found == {"defects": 3, "recovered_half": 1, "code_edits": 1, "expansions": 3,
                     "code_edit_rate": pytest.approx(1 / 3), "tokens": 300, "seconds": 600.0}
    assert totals([], 1.0)["code_edit_rate"] is None
    assert one("a", 0.5, 1, 1).to_json()["stop"].startswith("a node passed every search task")


def test_the_command_ends_its_table_with_the_sets_totals_and_puts_them_in_its_json(tmp_path, monkeypatch):
    import json

    from typer.testing import CliRunner

    from evolve.bench.selfrepair import Recovery, SelfRepair
    from evolve.cli import app

    found = [Recovery("reply-cut", "r", 16, 0.75, 0.06, 0.69, 0.91, (0.64, 1.25), 1, 2, 95359, 1306.8, "1"),
             Recovery("python-blocks-ignored", "r", 16, 0.75, 0.0, 0.0, 0.0, (0.0, 0.0), 0, 2, 84371, 787.5, "0")]
    monkeypatch.setattr(SelfRepair, "bench", lambda self, defects, seed=None, reference=None: found)
    shown = CliRunner().invoke(app, ["bench", "selfrepair", "--archive", str(tmp_path)])
    assert shown.exit_code == 0, shown.output
    assert shown.output.splitlines()[-1].startswith(
        "recovered by half or more: 1 of 2; code edits 1 of 4 expansions (0.25); ")
    printed = CliRunner().invoke(app, ["bench", "selfrepair", "--archive", str(tmp_path), "--json"])
    totals = json.loads(printed.stdout.splitlines()[-1])["totals"]
    assert (totals["recovered_half"], totals["code_edits"], totals["expansions"], totals["tokens"]) == (1, 1, 4, 179730)
