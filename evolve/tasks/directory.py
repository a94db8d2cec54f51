"""Suites written as directories: `tasks/<suite>/<task>/{task.toml, statement.md, repo/, tests/,
solution.patch}`."""

from __future__ import annotations

import tomllib
from pathlib import Path

from evolve.tasks.types import SPLITS, Task, TaskError, TaskSuite, read_files

REQUIRED = ("id", "statement", "test_command", "split")


def load_task(task_dir: Path, suite: str) -> Task:
    toml_path = task_dir / "task.toml"
    try:
        doc = tomllib.loads(toml_path.read_text())
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise TaskError(f"{toml_path}: {exc}") from exc
    for key in REQUIRED:
        if key not in doc:
            raise TaskError(f"{toml_path}: missing key {key!r}")
    if doc["split"] not in SPLITS:
        raise TaskError(f"{toml_path}: split must be one of {SPLITS}, not {doc['split']!r}")
    if doc["id"] != task_dir.name:
        raise TaskError(f"{toml_path}: id {doc['id']!r} differs from the directory name {task_dir.name!r}")
    timeouts = doc.get("timeouts", {})
    for part in ("repo", "tests"):
        if not (task_dir / part).is_dir():
            raise TaskError(f"{task_dir}: missing {part}/")
    return Task(
        id=doc["id"],
        suite=suite,
        split=doc["split"],
        statement=(task_dir / doc["statement"]).read_text(),
        repo=read_files(task_dir / "repo"),
        hidden_tests={
            f"{doc.get('tests_dir', 'tests')}/{k}": v for k, v in read_files(task_dir / "tests").items()
        },
        reference_patch=(task_dir / "solution.patch").read_text()
        if (task_dir / "solution.patch").exists()
        else "",
        test_command=doc["test_command"],
        tests_dir=doc.get("tests_dir", "tests"),
        pass_regex=doc.get("pass_regex"),
        image=doc.get("image", "evolve-base:latest"),
        language=doc.get("language", "python"),
        difficulty=doc.get("difficulty", "medium"),
        agent_timeout_s=float(timeouts.get("agent_s", 600)),
        test_timeout_s=float(timeouts.get("test_s", 60)),
        tags=tuple(doc.get("tags", ())),
    )


def load_dir_suite(root: Path, name: str | None = None) -> TaskSuite:
    if not root.is_dir():
        raise TaskError(f"no task suite at {root}")
    name = name or root.name
    tasks = tuple(load_task(d, name) for d in sorted(root.iterdir()) if (d / "task.toml").is_file())
    if not tasks:
        raise TaskError(f"{root} holds no tasks (no */task.toml)")
    return TaskSuite(name, tasks)
