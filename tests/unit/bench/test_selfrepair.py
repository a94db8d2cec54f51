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
    changed = [
        p.relative_to(copy).as_posix()
        for p in sorted(copy.rglob("*.py"))
        if p.read_bytes() != (seed_dir() / p.relative_to(copy)).read_bytes()
    ]
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
    with pytest.raises(
        EvolveError, match=r"reply-cut: the run was stopped by signal 15 before it was scored"
    ):
        SelfRepair(config, tmp_path).recover("reply-cut", tmp_path / "agent", {"t": True})
    assert Stopped.closed


def test_the_totals_answer_the_goal_over_the_set():
    from evolve.bench.selfrepair import Recovery, totals

    def one(name, fraction, code, expansions):
        return Recovery(
            name,
            "r",
            16,
            0.75,
            0.0,
            0.5,
            fraction,
            None,
            code,
            expansions,
            100,
            60.0,
            "1",
            "a node passed every search task (node 1, 6 of 6; `[budget] stop_when_solved`)",
        )

    found = totals([one("a", 0.5, 1, 1), one("b", 0.49, 0, 2), one("c", None, 0, 0)], 600.04)
    assert found == {
        "defects": 3,
        "recovered_half": 1,
        "code_edits": 1,
        "expansions": 3,
        "code_edit_rate": pytest.approx(1 / 3),
        "tokens": 300,
        "seconds": 600.0,
    }
    assert totals([], 1.0)["code_edit_rate"] is None
    assert one("a", 0.5, 1, 1).to_json()["stop"].startswith("a node passed every search task")


def test_the_command_ends_its_table_with_the_sets_totals_and_puts_them_in_its_json(tmp_path, monkeypatch):
    import json

    from typer.testing import CliRunner

    from evolve.bench.selfrepair import Recovery, SelfRepair
    from evolve.cli import app

    found = [
        Recovery("reply-cut", "r", 16, 0.75, 0.06, 0.69, 0.91, (0.64, 1.25), 1, 2, 95359, 1306.8, "1"),
        Recovery("python-blocks-ignored", "r", 16, 0.75, 0.0, 0.0, 0.0, (0.0, 0.0), 0, 2, 84371, 787.5, "0"),
    ]
    monkeypatch.setattr(SelfRepair, "bench", lambda self, defects, **given: found)
    shown = CliRunner().invoke(app, ["bench", "selfrepair", "--archive", str(tmp_path)])
    assert shown.exit_code == 0, shown.output
    assert shown.output.splitlines()[-1].startswith(
        "recovered by half or more: 1 of 2; code edits 1 of 4 expansions (0.25); "
    )
    printed = CliRunner().invoke(app, ["bench", "selfrepair", "--archive", str(tmp_path), "--json"])
    totals = json.loads(printed.stdout.splitlines()[-1])["totals"]
    assert (totals["recovered_half"], totals["code_edits"], totals["expansions"], totals["tokens"]) == (
        1,
        1,
        4,
        179730,
    )


def test_the_test_set_loads_whole_and_each_defect_changes_one_place_of_the_seed(tmp_path):
    from evolve.bench.selfrepair import defect_set

    defects, default = defect_set("test")
    assert len(defects) >= 5 and default == tuple(defects)
    assert sum(d.form.startswith("omission") for d in defects.values()) >= 2
    for name, defect in defects.items():
        copy = plant(defect, None, tmp_path / name)
        ast.parse((copy / defect.path).read_text())
    with pytest.raises(EvolveError, match="unknown defect set 'other'"):
        defect_set("other")


def test_a_set_whose_digest_differs_is_refused_in_one_line(tmp_path):
    from evolve.bench.selfrepair import FILE_SETS, load_defects, verified

    test_set = FILE_SETS["test"]

    changed = tmp_path / "test.toml"
    changed.write_text(test_set.read_text() + "\n[extra]\npath = 'a'\nold = 'b'\nnew = 'c'\nwhat = 'd'\n")
    (tmp_path / "test.toml.sha256").write_text((test_set.parent / "test.toml.sha256").read_text())
    with pytest.raises(
        EvolveError,
        match=r"test.toml: its SHA-256 is [0-9a-f]{12}\.\.\., not the committed "
        r"70306d57c8a7\.\.\. \(test.toml.sha256\)",
    ):
        verified(changed)
    assert verified(test_set) == test_set and "extra" in load_defects(changed)
    assert all(verified(path) == path for path in FILE_SETS.values())


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("[a]\npath = 'x'\nold = 'y'\nnew = 'z'\n", "defect a: no what"),
        ("[a]\npath = 'x'\nold = 'y'\nnew = 'z'\nwhat = 'w'\nwhere = 'v'\n", "defect a: unknown key where"),
        ("[a]\npath = 'x'\nold = 1\nnew = 'z'\nwhat = 'w'\n", "defect a: old is not text"),
        ("a = 1\n", "a is not a table of a defect"),
        ("", "no defects in it"),
        ("[a\n", "cannot read the defects"),
    ],
)
def test_a_defects_file_that_is_not_one_is_refused_naming_what_is_wrong(tmp_path, text, why):
    from evolve.bench.selfrepair import load_defects

    path = tmp_path / "mine.toml"
    path.write_text(text)
    with pytest.raises(EvolveError, match=why):
        load_defects(path)


def test_the_command_runs_the_chosen_set_or_a_users_file_and_reports_the_locations_ranked_first(
    tmp_path, monkeypatch
):
    import json

    from typer.testing import CliRunner

    from evolve.bench.selfrepair import Recovery, SelfRepair
    from evolve.cli import app

    asked = []

    def bench(self, defects, **given):
        asked.append((defects, sorted(given["catalogue"]), given["default"]))
        return [
            Recovery(
                name,
                "r",
                16,
                0.75,
                0.0,
                0.5,
                0.67,
                (0.3, 1.0),
                1,
                2,
                10,
                60.0,
                "1",
                locations=("agent/x.py:3", "agent/y.py:9"),
            )
            for name in defects or given["default"]
        ]

    monkeypatch.setattr(SelfRepair, "bench", bench)
    shown = CliRunner().invoke(
        app,
        ["bench", "selfrepair", "--archive", str(tmp_path), "--set", "test", "--defect", "reply-forgotten"],
    )
    assert shown.exit_code == 0, shown.output
    assert "reply-forgotten" in asked[-1][1] and asked[-1][0] == ["reply-forgotten"]
    assert "agent/x.py:3, agent/y.py:9" in shown.output.splitlines()[1]
    mine = tmp_path / "mine.toml"
    mine.write_text("[gone]\npath = 'bot/core.py'\nold = 'a'\nnew = 'b'\nwhat = 'w'\n")
    printed = CliRunner().invoke(
        app,
        [
            "bench",
            "selfrepair",
            "--archive",
            str(tmp_path),
            "--reference",
            str(tmp_path),
            "--defects",
            str(mine),
            "--json",
        ],
    )
    assert printed.exit_code == 0, printed.output
    assert asked[-1] == (None, ["gone"], ("gone",))
    found = json.loads(printed.stdout.splitlines()[-1])
    assert found["set"] == str(mine) and found["defects"]["gone"]["locations"] == [
        "agent/x.py:3",
        "agent/y.py:9",
    ]
    both = CliRunner().invoke(
        app, ["bench", "selfrepair", "--archive", str(tmp_path), "--set", "test", "--defects", str(mine)]
    )
    assert both.exit_code != 0 and "--defects FILE and --set are alternatives" in str(
        both.exception or both.output
    )
