"""The seed agent's own test suite (the one the validation gate runs) passes on the host."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import evolve.seed

SEED = Path(evolve.seed.__file__).parent


def test_seed_agent_tests_pass():
    env = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "PYTHONDONTWRITEBYTECODE": "1"}
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"], cwd=SEED,
                          capture_output=True, text=True, timeout=600, env=env, check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert " passed" in done.stdout


def test_seed_is_standard_library_only():
    allowed = set(sys.stdlib_module_names) | {"agent", "pytest", "tests"}
    for path in (SEED / "agent").rglob("*.py"):
        for line in path.read_text().splitlines():
            words = line.split()
            if line.startswith(("import ", "from ")) and len(words) > 1:
                assert words[1].split(".")[0] in allowed, f"{path.name}: {line}"


def test_copy_seed_leaves_out_the_engine_files(tmp_path):
    from evolve.seed import copy_seed

    dest = copy_seed(tmp_path / "agent-code")
    assert (dest / "agent" / "__main__.py").exists() and (dest / "requirements.txt").exists()
    assert (dest / "agent" / "__init__.py").exists() and not (dest / "__init__.py").exists()
    assert not list(dest.rglob("__pycache__"))
