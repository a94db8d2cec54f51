"""`evolve tasks check`: prove every task's grader — the reference passes, the untouched repo fails."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from evolve.sandbox.types import Sandbox, SandboxUnavailable
from evolve.tasks.grading import Grade, GradeItem, grade_in
from evolve.tasks.types import Task, TaskSuite

SandboxFactory = Callable[[str, str], Sandbox]
"""(image, job label) -> a fresh sandbox."""


@dataclass(frozen=True)
class TaskCheck:
    task_id: str
    reference: Grade
    untouched: Grade

    @property
    def ok(self) -> bool:
        return self.reference.outcome == "pass" and self.untouched.outcome != "pass"


@dataclass(frozen=True)
class CheckReport:
    suite: str
    checks: tuple[TaskCheck, ...]
    errors: tuple[str, ...] = field(default=())
    """Task ids whose grading failed for infrastructure reasons."""

    @property
    def mismatches(self) -> list[str]:
        return [c.task_id for c in self.checks if not c.ok] + list(self.errors)

    def to_json(self) -> dict:
        return {
            "suite": self.suite,
            "tasks": len(self.checks) + len(self.errors),
            "reference_pass": sum(c.reference.outcome == "pass" for c in self.checks),
            "untouched_fail": sum(c.untouched.outcome != "pass" for c in self.checks),
            "mismatches": self.mismatches,
        }


def check_suite(
    suite: TaskSuite, make_sandbox: SandboxFactory, *, workers: int = 2, chunk: int = 400
) -> CheckReport:
    """Grade each task's reference and untouched repo, many per sandbox (one sandbox per image and chunk)."""
    by_image: dict[str, list[Task]] = {}
    for task in suite:
        by_image.setdefault(task.image, []).append(task)
    grades: dict[str, Grade] = {}
    errors: list[str] = []
    for image, tasks in by_image.items():
        for start in range(0, len(tasks), chunk):
            part = tasks[start : start + chunk]
            items = [GradeItem(f"{t.id}#reference", t, t.reference_patch) for t in part]
            items += [GradeItem(f"{t.id}#untouched", t, "") for t in part]
            try:
                with make_sandbox(image, f"check-{suite.name}-{start}") as sandbox:
                    grades.update((g.key, g) for g in grade_in(sandbox, items, workers=workers))
            except SandboxUnavailable:
                errors += [t.id for t in part]
    checks = tuple(
        TaskCheck(t.id, grades[f"{t.id}#reference"], grades[f"{t.id}#untouched"])
        for t in suite
        if f"{t.id}#reference" in grades
    )
    return CheckReport(suite.name, checks, tuple(errors))
