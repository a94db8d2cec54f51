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


def bundled_agent(name: str) -> Path | None:
    """The directory of the bundled agent `name` (`[seed] agent`) for `copy_agent`: None for the seed
    itself."""
    if name == "seed":
        return None
    if name == "bare":
        return seed_dir().parent / "seeds" / "bare"
    raise ValueError(f"no bundled agent {name!r} (one of: seed, bare)")


def agent_problem(source: Path) -> str | None:
    """Why `source` cannot be a root agent at a glance (the full check is `evolve agent check`), or None."""
    if not source.is_dir():
        return f"{source}: no such directory"
    if not (source / "agent" / "__main__.py").is_file():
        return f"{source}: no agent/__main__.py (the contract runs `python -m agent solve|improve` there)"
    from evolve.archive.importers import _check_links  # the importers' rule: no link out of the tree
    from evolve.errors import EvolveError

    try:
        _check_links(source)
    except EvolveError as exc:
        return str(exc)
    return None


def copy_agent(source: Path | None, dest: Path) -> Path:
    """Copy the root agent to `dest`: the bundled seed (None) or any directory that meets the contract,
    without version-control and cache files."""
    if source is None:
        return copy_seed(dest)
    shutil.copytree(
        source,
        dest,
        symlinks=True,  # links stay links (agent_problem refuses those out of the tree)
        ignore=shutil.ignore_patterns(".git", "__pycache__", "*.pyc", ".pytest_cache"),
    )
    return dest


def copy_seed(dest: Path) -> Path:
    """Copy the seed agent's project to `dest` (created), without the engine's own files."""
    top = shutil.ignore_patterns(*_ENGINE_ONLY)
    below = shutil.ignore_patterns("__pycache__", "*.pyc", ".pytest_cache")
    shutil.copytree(
        seed_dir(), dest, ignore=lambda d, names: (top if Path(d) == seed_dir() else below)(d, names)
    )
    return dest
