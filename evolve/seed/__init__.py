"""Package data: the seed agent's project (`agent/`, `tests/`, `requirements.txt`), the root of every tree.

This `__init__.py` belongs to the engine, not to the agent: `copy_seed` leaves it out.
"""

from __future__ import annotations

import shutil
from pathlib import Path

_ENGINE_ONLY = ("__init__.py", "__pycache__", "*.pyc", ".pytest_cache")


def seed_dir() -> Path:
    """Where the seed agent's project lies in the installed package (read it; never edit it in place)."""
    return Path(__file__).parent


def copy_seed(dest: Path) -> Path:
    """Copy the seed agent's project to `dest` (created), without the engine's own files."""
    top = shutil.ignore_patterns(*_ENGINE_ONLY)
    below = shutil.ignore_patterns("__pycache__", "*.pyc", ".pytest_cache")
    shutil.copytree(seed_dir(), dest, ignore=lambda d, names: (top if Path(d) == seed_dir() else below)(d, names))
    return dest
