"""Typed rows of a run: nodes, evaluations, jobs, and the outcome vocabulary."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Outcome = Literal["pass", "fail", "timeout", "error", "infra"]
OUTCOMES: tuple[str, ...] = ("pass", "fail", "timeout", "error", "infra")
# `infra` means the engine, Docker or the model server failed: retried, never counted.
FAILURE_OUTCOMES: frozenset[str] = frozenset({"fail", "timeout", "error"})

NodeStatus = Literal["valid", "invalid"]
JobState = Literal["started", "finished", "failed", "cancelled"]
JOB_STATES: tuple[str, ...] = ("started", "finished", "failed", "cancelled")


def counts_as(outcome: str) -> bool | None:
    """True for a success, False for a failure, None for an outcome that does not count (infra)."""
    if outcome == "pass":
        return True
    if outcome in FAILURE_OUTCOMES:
        return False
    if outcome == "infra":
        return None
    raise ValueError(f"unknown outcome {outcome!r}; expected one of {', '.join(OUTCOMES)}")


@dataclass(frozen=True)
class Node:
    """One agent codebase in the clade tree: a commit plus what produced it."""

    id: str
    parent: str | None
    commit: str
    created: float
    origin: str
    status: NodeStatus = "valid"
    reason: str | None = None
    instructions: str | None = None
    tokens: int = 0
    cost_usd: float = 0.0

    @property
    def valid(self) -> bool:
        return self.status == "valid"


@dataclass(frozen=True)
class Evaluation:
    """One graded attempt of one node on one task."""

    node: str
    task: str
    attempt: int
    outcome: Outcome
    duration_s: float | None = None
    tokens: int = 0
    log_path: str | None = None
    created: float = 0.0
    id: int | None = None
    split: str = "dev"
    """The task split: the search counts `dev` results; `heldout` only scores the final agent."""


@dataclass(frozen=True)
class Job:
    """One unit of dispatched work (an expansion or an evaluation) and its state."""

    id: int
    kind: str
    node: str
    task: str | None
    state: JobState
    started: float
    finished: float | None = None
    detail: str | None = None
    split: str | None = None
    """An evaluation's split: `dev` (the search counts it) or `heldout` (final scoring only)."""
    attempt: int = 1
    """1, or 1 + the attempts of the same work that an interruption cut short."""
    requeue_of: int | None = None
    """The interrupted job this one runs again."""
    decision: int | None = None
    """The ordinal of the search decision that made this job (shared by its re-runs); None for
    held-out scoring and jobs outside a runner."""
