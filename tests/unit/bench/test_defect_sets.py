"""Every held-out defect set in evolve/bench/defects/ plants into its agent (the bundled seed, or the bench
agent of its name) as written, and matches the digest committed beside it (a set is fixed before it is used;
an edit without a new digest is caught here).

Read as files on purpose, not through evolve.bench: the sets are data that must hold whatever the bench does.
"""

from __future__ import annotations

import hashlib
import tomllib
from pathlib import Path

import pytest

from evolve.seed import copy_agent

DEFECTS_DIR = Path(__file__).resolve().parents[3] / "evolve" / "bench" / "defects"
SETS = sorted(DEFECTS_DIR.glob("*.toml"))
FIELDS = {"path", "old", "new", "what"}
AGENTS = DEFECTS_DIR.parent / "agents"
"""A set named after a bench agent (agents/<name>/) is planted into that agent; the others into the seed."""


def test_there_are_sets_to_check():
    assert {path.name for path in SETS} >= {"test.toml", "test2.toml"}


@pytest.mark.parametrize("toml_path", SETS, ids=lambda path: path.name)
def test_each_defect_plants_exactly_once_into_a_fresh_copy_of_its_agent(toml_path, tmp_path):
    defects = tomllib.loads(toml_path.read_text())
    assert defects, f"{toml_path.name} defines no defect"
    for name, defect in defects.items():
        assert FIELDS <= set(defect), f"{toml_path.name} [{name}] lacks {sorted(FIELDS - set(defect))}"
        assert defect["old"] != defect["new"], f"{toml_path.name} [{name}] changes nothing"
        agent = AGENTS / toml_path.stem
        root = copy_agent(agent if agent.is_dir() else None, tmp_path / toml_path.stem / name)
        target = root / defect["path"]
        text = target.read_text()
        assert text.count(defect["old"]) == 1, (
            f"{toml_path.name} [{name}]: `old` is not once in {defect['path']}"
        )
        planted = text.replace(defect["old"], defect["new"], 1)
        target.write_text(planted)
        assert target.read_text() != text
        compile(planted, str(target), "exec")  # a planted defect changes behaviour, never the file's syntax


@pytest.mark.parametrize("toml_path", SETS, ids=lambda path: path.name)
def test_each_set_matches_its_committed_sha256(toml_path):
    digest_file = toml_path.with_name(toml_path.name + ".sha256")
    assert digest_file.is_file(), f"{toml_path.name} has no {digest_file.name} beside it"
    recorded, recorded_path = digest_file.read_text().split()
    assert recorded_path == toml_path.relative_to(DEFECTS_DIR.parents[2]).as_posix()
    assert hashlib.sha256(toml_path.read_bytes()).hexdigest() == recorded
