"""The selfrepair bench's second agent (evolve/bench/agents/caller) and its planted defects: the file is the
one its digest names, each defect plants in one place, and every defective copy still meets the contract's
static checks and passes the agent's own tests (a defect those tests catch would measure nothing)."""

import hashlib
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import evolve.bench
from evolve.bench.selfrepair import Defect, plant
from evolve.seed import agent_problem

BENCH = Path(evolve.bench.__file__).parent
AGENT, DEFECTS = BENCH / "agents" / "caller", BENCH / "defects" / "caller.toml"
ENTRIES = tomllib.loads(DEFECTS.read_text())
FIELDS = {"path", "old", "new", "layer", "form", "what"}


def own_tests(agent: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "PYTHONDONTWRITEBYTECODE": "1"}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"],
        cwd=agent,
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        check=False,
    )


def test_the_defects_file_is_the_one_its_digest_names():
    digest, name = (DEFECTS.parent / "caller.toml.sha256").read_text().split()
    assert name == "evolve/bench/defects/caller.toml"
    assert hashlib.sha256(DEFECTS.read_bytes()).hexdigest() == digest


def test_the_set_has_three_or_more_one_place_defects_and_an_omission():
    assert len(ENTRIES) >= 3 and all(set(entry) == FIELDS for entry in ENTRIES.values())
    assert any(entry["form"].startswith("omission") for entry in ENTRIES.values())
    assert len({entry["layer"] for entry in ENTRIES.values()}) >= 3


def test_the_intact_agent_meets_the_static_checks_and_passes_its_tests():
    assert agent_problem(AGENT) is None
    done = own_tests(AGENT)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]


@pytest.mark.parametrize("name", sorted(ENTRIES))
def test_each_defect_plants_in_one_place_and_leaves_an_agent_that_passes_its_tests(name, tmp_path):
    entry = ENTRIES[name]
    copy = plant(Defect(entry["path"], entry["old"], entry["new"], entry["what"]), AGENT, tmp_path / "agent")
    assert agent_problem(copy) is None
    changed = [
        p.relative_to(copy).as_posix()
        for p in sorted(copy.rglob("*.py"))
        if p.read_text() != (AGENT / p.relative_to(copy)).read_text()
    ]
    assert changed == [entry["path"]]
    # still Python: the defect is behaviour
    compile((copy / entry["path"]).read_text(), entry["path"], "exec")
    done = own_tests(copy)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
