"""Grading: a clean repo + the agent's diff (tests and test configuration dropped) + the hidden tests, in a
fresh sandbox. The diff is filtered here on the host, so nothing the agent wrote can reach the tests.
"""

from __future__ import annotations

import json
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from evolve.sandbox.types import Sandbox, SandboxUnavailable
from evolve.tasks.types import Task, write_files

GradeOutcome = Literal["pass", "fail", "timeout"]
STAGE = "/tmp/evolve-grade"
MARKER = "=== evolve-grade-results ==="
_SCRIPT = Path(__file__).with_name("grader_script.py")
_DIFF_HEADER = re.compile(r"^diff --git a/(\S+) b/(\S+)$", re.MULTILINE)


@dataclass(frozen=True)
class GradeItem:
    """One thing to grade: `patch` (a git diff; empty for the untouched repo) applied to `task`'s repo."""

    key: str
    task: Task
    patch: str


@dataclass(frozen=True)
class Grade:
    key: str
    outcome: GradeOutcome
    detail: str
    output: str
    duration: float
    dropped: tuple[str, ...] = ()
    """Paths whose changes were dropped (tests, test configuration)."""


def split_patch(patch: str) -> list[tuple[tuple[str, str], str]]:
    """The per-file sections of a git diff: ((old path, new path), text)."""
    starts = [m.start() for m in _DIFF_HEADER.finditer(patch)]
    sections = []
    for begin, end in zip(starts, starts[1:] + [len(patch)]):
        text = patch[begin:end]
        header = _DIFF_HEADER.match(text)
        sections.append(((header.group(1), header.group(2)), text))
    return sections


def filter_patch(patch: str, task: Task) -> tuple[str, tuple[str, ...]]:
    """Drop every file section that touches a protected path (either side of a rename); returns (kept, dropped)."""
    kept, dropped = [], []
    for (old, new), text in split_patch(patch):
        if task.is_protected(old) or task.is_protected(new):
            dropped.append(new if new != "/dev/null" else old)
        else:
            kept.append(text if text.endswith("\n") else text + "\n")
    return "".join(kept), tuple(dropped)


def stage(items: list[GradeItem], dest: Path, workers: int, remote: str = STAGE) -> dict[str, tuple[str, ...]]:
    """Lay out the grading directory: the script, a manifest, and per item repo/, tests/, patch.diff."""
    jobs, dropped = [], {}
    for n, item in enumerate(items):
        kept, dropped[item.key] = filter_patch(item.patch, item.task)
        job_dir = dest / f"{n:04d}"
        write_files(item.task.repo, job_dir / "repo")
        write_files(item.task.hidden_tests, job_dir / "tests")
        (job_dir / "patch.diff").write_text(kept)
        jobs.append({"key": item.key, "dir": f"{remote}/{n:04d}", "command": item.task.test_command,
                     "timeout": item.task.test_timeout_s, "pass_regex": item.task.pass_regex})
    (dest / "grader_script.py").write_text(_SCRIPT.read_text())
    (dest / "manifest.json").write_text(json.dumps({"workers": workers, "jobs": jobs}))
    return dropped


def grade_in(sandbox: Sandbox, items: list[GradeItem], *, workers: int = 1, timeout: float | None = None,
             remote: str = STAGE) -> list[Grade]:
    """Grade `items` in one fresh sandbox (staged at `remote`); SandboxUnavailable when grading itself fails."""
    if not items:
        return []
    with tempfile.TemporaryDirectory(prefix="evolve-grade-") as tmp:
        dropped = stage(items, Path(tmp), workers, remote)
        sandbox.put_dir(Path(tmp), remote)
    budget = timeout or sum(i.task.test_timeout_s + 30 for i in items) / max(workers, 1) + 60
    result = sandbox.exec(["python3", f"{remote}/grader_script.py", f"{remote}/manifest.json"], timeout=budget)
    if MARKER not in result.stdout:
        raise SandboxUnavailable(f"the grader produced no results (exit {result.returncode}, timed out "
                                 f"{result.timed_out}): {(result.stderr or result.stdout)[-800:]}")
    records = json.loads(result.stdout.rsplit(MARKER, 1)[1])
    return [Grade(r["key"], r["outcome"], r["detail"], r["output"], r["duration"], dropped[r["key"]])
            for r in records]
