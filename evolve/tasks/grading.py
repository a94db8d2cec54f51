"""Grading: a clean repo + the agent's diff + the hidden tests, in a fresh sandbox
(docs/design.md §Trust boundaries).

The diff is applied whole in the sandbox; what it changed is then judged by path (grader_script.py's
`protected`): changes to tests, test-runner configuration, import hooks and symlinks are reverted and
reported as dropped. The verdict comes from per-test records the grader alone reads, never from the
tests' output or exit status alone.
"""

from __future__ import annotations

import ast
import configparser
import fnmatch
import json
import secrets
import tempfile
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from evolve import syntax
from evolve.sandbox.types import Sandbox, SandboxUnavailable
from evolve.tasks.expected_names import READERS, expected_names
from evolve.tasks.types import Task, write_files

GradeOutcome = Literal["pass", "fail", "timeout", "forged"]
STAGE = "/tmp/evolve-grade"
MARKER = "=== evolve-grade-results ==="
_HERE = Path(__file__).parent
STAGED = (
    "grader_script.py",
    "grader_reports.py",
    "grader_canaries.py",
    "grader_canaries_text.py",
    "grader_sources.py",
    "grader_calls.py",
    "grader_values.py",
)
"""The grader's files, staged into every grading sandbox (standard library only)."""


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
    syntax on the host by the runner's own rules (`runner_rules`: which files, functions and classes it
    collects); a test file whose syntax cannot be read is expected as a whole (`path`); a declared test
    file that defines no test (a helper such as polyglot paasio's `test_utils.py`) expects nothing."""
    if task.results_protocol == "calls":
        return ["check"]
    if task.results_protocol in READERS:  # a runner's report file (polyglot's other languages)
        return expected_names(task.results_protocol, task.hidden_tests)
    rules = runner_rules(task)
    expected = []
    for rel, content in sorted(task.hidden_tests.items()):
        name = rel.rsplit("/", 1)[-1]
        if not (name.endswith(".py") and any(fnmatch.fnmatchcase(name, p) for p in rules.files)):
            continue
        found = _test_names(content, rules)
        expected += [f"{rel}::{test}" for test in found] if found is not None else [rel]
    return expected


@dataclass(frozen=True)
class RunnerRules:
    """What pytest collects (its `python_files`, `python_functions` and `python_classes`)."""

    files: tuple[str, ...] = ("test_*.py", "*_test.py")
    functions: tuple[str, ...] = ("test",)
    classes: tuple[str, ...] = ("Test",)


_INI = (
    ("pytest.ini", "pytest"),
    (".pytest.ini", "pytest"),
    ("tox.ini", "pytest"),
    ("setup.cfg", "tool:pytest"),
)


def runner_rules(task: Task) -> RunnerRules:
    """pytest's collection rules as the task's own configuration sets them (the first file pytest would
    read of pytest.ini, pyproject.toml, tox.ini, setup.cfg in the repo's root), else its defaults."""
    options: dict[str, str | list[str]] = {}
    for name, section in _INI[:2]:
        options = options or _ini_options(task.repo.get(name), section)
    if not options and "pyproject.toml" in task.repo:
        try:
            table = tomllib.loads(task.repo["pyproject.toml"].decode())
        except (tomllib.TOMLDecodeError, UnicodeDecodeError):
            table = {}
        options = table.get("tool", {}).get("pytest", {}).get("ini_options", {})
    for name, section in _INI[2:]:
        options = options or _ini_options(task.repo.get(name), section)
    default = RunnerRules()

    def words(key: str, fallback: tuple[str, ...]) -> tuple[str, ...]:
        value = options.get(key)
        return tuple(value.split() if isinstance(value, str) else value or fallback)

    return RunnerRules(
        words("python_files", default.files),
        words("python_functions", default.functions),
        words("python_classes", default.classes),
    )


def _ini_options(content: bytes | None, section: str) -> dict[str, str | list[str]]:
    if content is None:
        return {}
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(content.decode(errors="replace"))
    except configparser.Error:
        return {}
    return dict(parser[section]) if parser.has_section(section) else {}


def _test_names(source: bytes, rules: RunnerRules = RunnerRules()) -> list[str] | None:
    """The tests a file defines by the runner's rules; None when its syntax cannot be read."""
    try:
        tree = syntax.parse(source)
    except SyntaxError:
        return None

    def collected(name: str, prefixes: tuple[str, ...]) -> bool:
        return any(
            fnmatch.fnmatchcase(name, p) if any(c in p for c in "*?[") else name.startswith(p)
            for p in prefixes
        )

    names = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and collected(node.name, rules.functions):
            names.append(node.name)
        elif isinstance(node, ast.ClassDef) and (collected(node.name, rules.classes) or _is_testcase(node)):
            names += [
                f"{node.name}::{item.name}"
                for item in node.body
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef)
                and collected(item.name, rules.functions)
            ]
    return names


def _is_testcase(node: ast.ClassDef) -> bool:
    return any(
        (isinstance(b, ast.Attribute) and b.attr.endswith("TestCase"))
        or (isinstance(b, ast.Name) and b.id.endswith("TestCase"))
        for b in node.bases
    )


def stage(
    items: list[GradeItem], dest: Path, workers: int, remote: str = STAGE, *, isolate: bool = True
) -> None:
    """Lay out the grading directory: the script, a manifest, and per item repo/, tests/, patch.diff."""
    jobs = []
    for n, item in enumerate(items):
        task = item.task
        job_dir = dest / f"{n:04d}"
        write_files(task.repo, job_dir / "repo")
        write_files(task.hidden_tests, job_dir / "tests")
        (job_dir / "patch.diff").write_text(item.patch)
        jobs.append(
            {
                "key": item.key,
                "dir": f"{remote}/{n:04d}",
                "command": task.test_command,
                "build": task.build_command,
                "timeout": task.test_timeout_s,
                "pass_regex": task.pass_regex,
                "results": task.results_protocol,
                "expected": expected_tests(task),
                "protect": task.protection(),
                "canary_seed": secrets.token_hex(16),
                **_calls(task),
            }
        )
    for name in STAGED:
        (dest / name).write_text((_HERE / name).read_text())
    (dest / "manifest.json").write_text(json.dumps({"workers": workers, "isolate": isolate, "jobs": jobs}))


def grader_reply(text: str, truncated: bool) -> dict:
    """The JSON a grader printed after its marker; SandboxUnavailable (no verdict came back) when it is cut
    or not an object. The graders keep it within the output cap whatever the tests wrote."""
    try:
        reply = json.loads(text)
    except ValueError as exc:
        raise SandboxUnavailable(
            f"the grader's reply is not JSON (cut by the output cap: {truncated}): {exc}"
        ) from exc
    if not isinstance(reply, dict):
        raise SandboxUnavailable("the grader's reply is not a JSON object")
    return reply


def _calls(task: Task) -> dict:
    """A function-level task's files for grader_calls (its repo's one file, its one hidden file)."""
    if task.results_protocol != "calls":
        return {}
    if len(task.repo) != 1 or len(task.hidden_tests) != 1:
        raise ValueError(
            f"task {task.id}: a `calls` task has one repo file (the prompt) and one hidden check"
        )
    return {"calls": {"prompt": next(iter(task.repo)), "check": next(iter(task.hidden_tests))}}


def grade_in(
    sandbox: Sandbox,
    items: list[GradeItem],
    *,
    workers: int = 1,
    timeout: float | None = None,
    remote: str = STAGE,
    isolate: bool = True,
) -> list[Grade]:
    """Grade `items` in one fresh sandbox (staged at `remote`); SandboxUnavailable when grading itself fails.

    `isolate` (the default) needs a grading sandbox whose grader is root
    (evolve.sandbox.factory.grading_sandbox): the tests then run as uid 1000. Only unit tests on a host turn
    it off."""
    if not items:
        return []
    with tempfile.TemporaryDirectory(prefix="evolve-grade-") as tmp:
        stage(items, Path(tmp), workers, remote, isolate=isolate)
        sandbox.put_dir(Path(tmp), remote)
    budget = timeout or sum(i.task.test_timeout_s + 30 for i in items) / max(workers, 1) + 60
    result = sandbox.exec(
        ["python3", f"{remote}/grader_script.py", f"{remote}/manifest.json"], timeout=budget
    )
    if MARKER not in result.stdout:
        raise SandboxUnavailable(
            f"the grader produced no results (exit {result.returncode}, timed out "
            f"{result.timed_out}): {(result.stderr or result.stdout)[-800:]}"
        )
    report = grader_reply(result.stdout.rsplit(MARKER, 1)[1], result.truncated)
    if isolate and not report["isolated"]:
        raise SandboxUnavailable(
            "the grading sandbox's grader is not root, so it cannot run the tests as "
            "another uid (make it with evolve.sandbox.factory.grading_sandbox)"
        )
    return [
        Grade(r["key"], r["outcome"], r["detail"], r["output"], r["duration"], tuple(r["dropped"]))
        for r in report["results"]
    ]
