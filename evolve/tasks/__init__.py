"""Benchmark tasks: one `Task` type, suites loaded by name (docs/design.md §A task)."""

from evolve.tasks.suites import load_suite, suite_names, tasks_root
from evolve.tasks.types import SPLITS, Split, Task, TaskError, TaskSuite

__all__ = ["SPLITS", "Split", "Task", "TaskError", "TaskSuite", "load_suite", "suite_names", "tasks_root"]
