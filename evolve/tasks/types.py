"""One task type for every benchmark: a repository, a problem statement, hidden tests, a reference fix."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from evolve.errors import EvolveError
from evolve.tasks.grader_script import protected

Split = Literal["dev", "heldout"]
ResultsProtocol = Literal["pytest", "calls", "exit", "catch2", "gotest", "libtest", "junit", "jest"]
Grader = Literal["script", "swebench"]
SPLITS: tuple[Split, ...] = ("dev", "heldout")

DEFAULT_PROTECTED = (
    "conftest.py",
    "pytest.ini",
    "tox.ini",
    "setup.cfg",
    "pyproject.toml",
    "sitecustomize.py",
    "usercustomize.py",
)
"""File names the agent's diff may not touch anywhere (they change how tests run), beside the tests dir."""


class TaskError(EvolveError):
    """A suite or task is missing or malformed."""


@dataclass(frozen=True)
class Task:
    """A benchmark task. Files are held in memory: the suites are small (SWE-bench images carry their
    repo)."""

    id: str
    suite: str
    split: Split
    statement: str
    """The problem the agent is given (markdown)."""
    repo: Mapping[str, bytes]
    """What the agent gets: relative path -> content."""
    hidden_tests: Mapping[str, bytes]
    """Copied into the repo (at their relative paths) only when grading; never shown to the agent."""
    reference_patch: str
    """A unified diff (git format) that solves the task; never shown to the agent."""
    test_command: str
    """Shell command run in the repo root at grading, as uid 1000; see `results` for what makes a pass."""
    build_command: str = ""
    """Run before `test_command` (as uid 1000) by the report protocols (catch2 ...): it gets no report
    directory, so nothing it starts can know where the results will be written."""
    tests_dir: str = "tests"
    """Where the tests live; the agent's changes under it are dropped at grading."""
    protected_paths: tuple[str, ...] = ()
    """Further paths the agent's changes to are dropped, as the hidden tests' (SWE-bench: its test
    patch's)."""
    pass_regex: str | None = None
    """A pattern the test output must contain to pass, beside exit status 0."""
    image: str = "evolve-base:latest"
    """The image the agent solves in (`solve_image`), and grading's unless `grader_image` names another."""
    grader_image: str | None = None
    repo_in_image: str | None = None
    """Where the image itself holds the repo (a SWE-bench instance: /testbed); None: the engine copies
    `repo` into the agent's sandbox."""
    grader: Grader = "script"
    """Who judges: `script` (evolve.tasks.grading) or `swebench` (evolve.tasks.swebench_grading, in the
    instance's image)."""
    writable_root: bool = False
    """Its images write anywhere (SWE-bench instances): their sandboxes get a writable root, no disk cap."""
    language: str = "python"
    difficulty: str = "medium"
    agent_timeout_s: float = 600.0
    test_timeout_s: float = 60.0
    protected: tuple[str, ...] = DEFAULT_PROTECTED
    tags: tuple[str, ...] = field(default=())
    results: ResultsProtocol | None = None
    """How the tests report per-test results to the grader (evolve.tasks.grader_script); None: `pytest`
    when the command runs pytest, else `exit` (exit status only, for suites with no reporter yet). `calls`:
    a function-level check graded out of process (evolve.tasks.grader_calls; the repo's one file is the
    prompt, the one hidden file the check). The runners' report formats (evolve.tasks.grader_reports)
    write to $EVOLVE_REPORT_DIR."""

    @property
    def solve_image(self) -> str:
        return self.image

    @property
    def grade_image(self) -> str:
        return self.grader_image or self.image

    @property
    def results_protocol(self) -> ResultsProtocol:
        if self.results is not None:
            return self.results
        return "pytest" if "pytest" in self.test_command else "exit"

    def protection(self) -> dict:
        """What the grader needs to judge a path protected (the rule itself is grader_script.protected)."""
        return {
            "tests_dir": self.tests_dir,
            "hidden": sorted({*self.hidden_tests, *self.protected_paths}),
            "names": list(self.protected),
        }

    def is_protected(self, path: str) -> bool:
        """True when a change of `path` by the agent must not reach grading (tests, test configuration)."""
        return protected(path, self.protection())


def write_files(files: Mapping[str, bytes], dest: Path) -> Path:
    """Materialise a file mapping under `dest` (created)."""
    dest.mkdir(parents=True, exist_ok=True)
    for rel, content in files.items():
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content)
    return dest


def read_files(root: Path) -> dict[str, bytes]:
    """Every file under `root` by relative POSIX path (skipping caches)."""
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts and ".pytest_cache" not in p.parts
    }


@dataclass(frozen=True)
class TaskSuite:
    name: str
    tasks: tuple[Task, ...]

    def __iter__(self) -> Iterator[Task]:
        return iter(self.tasks)

    def __len__(self) -> int:
        return len(self.tasks)

    def get(self, task_id: str) -> Task:
        for task in self.tasks:
            if task.id == task_id:
                return task
        raise TaskError(f"suite {self.name} has no task {task_id}")

    def split(self, split: str | None) -> TaskSuite:
        """The tasks of one split (`None`: all); the name may come from a user, so it is checked."""
        if split is None:
            return self
        if split not in SPLITS:
            raise TaskError(f"unknown split {split!r}; choose one of {', '.join(SPLITS)}")
        return TaskSuite(self.name, tuple(t for t in self.tasks if t.split == split))

    def select(self, ids: list[str] | None = None, limit: int | None = None) -> TaskSuite:
        chosen = [self.get(i) for i in ids] if ids else list(self.tasks)
        return TaskSuite(self.name, tuple(chosen[:limit] if limit is not None else chosen))
