"""Every shipped config passes `evolve config check`; the published setups say what they reproduce."""

from __future__ import annotations

from pathlib import Path

import pytest

from evolve.cli.config import check
from evolve.config import load_config
from evolve.plan import make_plan

SHIPPED = sorted((Path(__file__).resolve().parents[3] / "evolve" / "configs").glob("*.toml"))
PUBLISHED = [p for p in SHIPPED if p.stem.startswith(("dgm-", "hgm-"))]


def test_the_published_setups_are_shipped():
    assert {p.stem for p in PUBLISHED} == {"dgm-swebench", "dgm-polyglot", "hgm-swebench60", "hgm-polyglot"}


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.stem)
def test_config_check_passes(path, capsys):
    check(path)
    assert f"{path}: ok" in capsys.readouterr().out


@pytest.mark.parametrize("path", PUBLISHED, ids=lambda p: p.stem)
def test_a_published_setup_cites_its_source_and_names_what_differs(path, monkeypatch):
    header = [line for line in path.read_text().splitlines() if line.startswith("#")]
    text = "\n".join(header)
    assert "arXiv" in text and "github.com/" in text and "What differs:" in text
    monkeypatch.delenv("EVOLVE_SWEBENCH_DATASET", raising=False)
    monkeypatch.delenv("EVOLVE_POLYGLOT_DIR", raising=False)
    config = load_config(path)
    plan = make_plan(
        config.model_copy(
            update={"run": config.run.model_copy(update={"archive_dir": Path("/nonexistent")})}
        ),
        check=False,
    )
    assert plan.dollars > 0 and all(role.priced for role in plan.roles)  # every hosted model has a price
    assert plan.counts.exact_tasks  # the subsets are named, so the tasks are counted, not guessed


def test_the_wide_cpu_config_pairs_the_seed_and_the_final_agent_on_over_100_held_out_tasks():
    config = load_config(
        Path(__file__).resolve().parents[3] / "evolve" / "configs" / "humaneval-cpu-wide.toml"
    )
    plan = make_plan(
        config.model_copy(
            update={"run": config.run.model_copy(update={"archive_dir": Path("/nonexistent")})}
        ),
        check=False,
    )
    # seed and final, paired
    assert plan.counts.heldout_tasks == 109 and plan.counts.heldout_evaluations == 2 * 109
    assert config.meta.candidates == 3 and config.meta.require_code
