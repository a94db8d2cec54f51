"""The bare seed (`[seed] agent = "bare"`, evolve/seeds/bare): its own tests pass on the host, it uses the
standard library only, it is small and it carries none of the tuned seed's repairs for weak models."""

import os
import subprocess
import sys

import pytest

from evolve.seed import agent_problem, bundled_agent, copy_agent

BARE = bundled_agent("bare")


def test_the_bare_seed_meets_the_static_checks_and_passes_its_tests():
    assert BARE is not None and agent_problem(BARE) is None
    env = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "PYTHONDONTWRITEBYTECODE": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"],
        cwd=BARE,
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]


def test_the_bare_seed_is_small_standard_library_only_and_unrepaired(tmp_path):
    assert BARE is not None
    copy = copy_agent(BARE, tmp_path / "bare")
    sources = sorted((copy / "agent").glob("*.py"))
    assert sum(len(p.read_text().splitlines()) for p in sources) <= 200
    assert {p.name for p in sources} == {"__init__.py", "__main__.py", "tools.py"}
    allowed = set(sys.stdlib_module_names) | {"agent"}
    for path in sources:
        for line in path.read_text().splitlines():
            if line.startswith(("import ", "from ")):
                assert line.split()[1].split(".")[0] in allowed, f"{path.name}: {line}"


def test_an_unknown_bundled_agent_is_named():
    assert bundled_agent("seed") is None
    with pytest.raises(ValueError, match=r"^no bundled agent 'tiny' \(one of: seed, bare\)$"):
        bundled_agent("tiny")
