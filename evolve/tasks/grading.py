"""Grading: a clean repo + the agent's diff + the hidden tests, in a fresh sandbox (DESIGN.md §4a).

The diff is applied whole in the sandbox; what it changed is then judged by path (grader_script.py's
`protected`): changes to tests, test-runner configuration, import hooks and symlinks are reverted and
reported as dropped. The verdict comes from per-test records the grader alone reads, never from the
tests' output or exit status alone.
"""

from __future__ import annotations

import ast
import json
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from evolve.sandbox.types import Sandbox, SandboxUnavailable
from evolve.tasks.expected_names import READERS, expected_names
from evolve.tasks.types import Task, write_files

GradeOutcome = Literal["pass", "fail", "timeout"]
STAGE = "/tmp/evolve-grade"
MARKER = "=== evolve-grade-results ==="
_SCRIPT = Path(__file__).with_name("grader_script.py")
_REPORTS = Path(__file__).with_name("grader_reports.py")


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
    """Paths whose changes were reverted (tests, test configuration, import hooks, symlinks)."""


def expected_tests(task: Task) -> list[str]:
    """`path::name` (or `path::Class::name`) of every test the hidden files define, read from their
    syntax on the host; a file whose tests cannot be read statically is expected as a whole (`path`)."""
    if task.results_protocol == "script":
        return ["check"]
    if task.results_protocol in READERS:  # a runner's report file (polyglot's other languages)
        return expected_names(task.results_protocol, task.hidden_tests)
    expected = []
    for rel, content in sorted(task.hidden_tests.items()):
        name = rel.rsplit("/", 1)[-1]
        if not (name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py"))):
            continue
        found = _test_names(content)
        expected += [f"{rel}::{test}" for test in found] if found else [rel]
    return expected


def _test_names(source: bytes) -> list[str]:
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    names = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith("test"):
            names.append(node.name)
        elif isinstance(node, ast.ClassDef) and (node.name.startswith("Test") or _is_testcase(node)):
            names += [f"{node.name}::{item.name}" for item in node.body
                      if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef) and item.name.startswith("test")]
    return names


def _is_testcase(node: ast.ClassDef) -> bool:
    return any((isinstance(b, ast.Attribute) and b.attr.endswith("TestCase"))
               or (isinstance(b, ast.Name) and b.id.endswith("TestCase")) for b in node.bases)


def stage(items: list[GradeItem], dest: Path, workers: int, remote: str = STAGE, *, isolate: bool = True) -> None:
    """Lay out the grading directory: the script, a manifest, and per item repo/, tests/, patch.diff."""
    jobs = []
    for n, item in enumerate(items):
        task = item.task
        job_dir = dest / f"{n:04d}"
        write_files(task.repo, job_dir / "repo")
        write_files(task.hidden_tests, job_dir / "tests")
        (job_dir / "patch.diff").write_text(item.patch)
        jobs.append({"key": item.key, "dir": f"{remote}/{n:04d}", "command": task.test_command,
                     "build": task.build_command,
                     "timeout": task.test_timeout_s, "pass_regex": task.pass_regex,
                     "results": task.results_protocol, "expected": expected_tests(task),
                     "protect": task.protection()})
    (dest / "grader_script.py").write_text(_SCRIPT.read_text())
    (dest / "grader_reports.py").write_text(_REPORTS.read_text())
    (dest / "manifest.json").write_text(json.dumps({"workers": workers, "isolate": isolate, "jobs": jobs}))


def grade_in(sandbox: Sandbox, items: list[GradeItem], *, workers: int = 1, timeout: float | None = None,
             remote: str = STAGE, isolate: bool = True) -> list[Grade]:
    """Grade `items` in one fresh sandbox (staged at `remote`); SandboxUnavailable when grading itself fails.

    `isolate` (the default) needs a grading sandbox whose grader is root (evolve.sandbox.factory.grading_sandbox):
    the tests then run as uid 1000. Only unit tests on a host turn it off."""
    if not items:
        return []
    with tempfile.TemporaryDirectory(prefix="evolve-grade-") as tmp:
        stage(items, Path(tmp), workers, remote, isolate=isolate)
        sandbox.put_dir(Path(tmp), remote)
    budget = timeout or sum(i.task.test_timeout_s + 30 for i in items) / max(workers, 1) + 60
    result = sandbox.exec(["python3", f"{remote}/grader_script.py", f"{remote}/manifest.json"], timeout=budget)
    if MARKER not in result.stdout:
        raise SandboxUnavailable(f"the grader produced no results (exit {result.returncode}, timed out "
                                 f"{result.timed_out}): {(result.stderr or result.stdout)[-800:]}")
    report = json.loads(result.stdout.rsplit(MARKER, 1)[1])
    if isolate and not report["isolated"]:
        raise SandboxUnavailable("the grading sandbox's grader is not root, so it cannot run the tests as "
                                 "another uid (make it with evolve.sandbox.factory.grading_sandbox)")
    return [Grade(r["key"], r["outcome"], r["detail"], r["output"], r["duration"], tuple(r["dropped"]))
            for r in report["results"]]
