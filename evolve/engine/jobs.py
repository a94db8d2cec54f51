"""What the runner dispatches and gets back: the `Worker` protocol and its typed results.

A worker does the work of one job (an expansion or an evaluation) and returns data; it never
writes to the archive. The runner, on its own thread, records every result, so the archive has
one writer and a result is recorded together with the end of its job in one transaction.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from evolve.archive.records import Job, Node


@dataclass(frozen=True)
class EvaluationResult:
    """The graded outcome of one agent on one task."""

    outcome: str
    """pass | fail | timeout | error | infra"""
    duration_s: float = 0.0
    tokens: int = 0
    cost_usd: float = 0.0
    log_path: str | None = None
    detail: str | None = None


@dataclass(frozen=True)
class ExpansionResult:
    """A self-modification attempt: the child's code, or why there is none.

    A child without code (the diagnosis failed, the diff was empty) is still recorded as an invalid
    node carrying its parent's code and the reason, so the tree (and HGM's |T|) counts the attempt.
    """

    code_dir: Path | None
    valid: bool
    reason: str | None = None
    instructions: str | None = None
    tokens: int = 0
    cost_usd: float = 0.0
    tree: str | None = None
    """The git tree id of `code_dir` as the gate checked it; a valid child is committed only with it."""


class Worker(Protocol):
    """Runs jobs. Called from executor threads; must be safe to call concurrently."""

    def evaluate(self, job: Job, node: Node, task: str, split: str) -> EvaluationResult:
        """Run `node`'s agent on `task` and grade it."""
        ...

    def expand(self, job: Job, node: Node) -> ExpansionResult:
        """Let `node`'s agent modify its own code; return the child."""
        ...

    def cancel(self) -> None:
        """Stop the work in flight as fast as possible (kill its sandboxes)."""
        ...
