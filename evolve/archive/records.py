"""Typed rows of a run: nodes, evaluations, jobs (their vocabulary is in `evolve.archive.vocab`)."""

from __future__ import annotations

from dataclasses import dataclass

from evolve.archive.vocab import (
    FAILURE_OUTCOMES,
    JOB_STATES,
    OUTCOMES,
    JobKind,
    JobState,
    NodeStatus,
    Outcome,
    Split,
    counts_as,
)

__all__ = [
    "FAILURE_OUTCOMES",
    "JOB_STATES",
    "OUTCOMES",
    "Evaluation",
    "Job",
    "JobKind",
    "JobState",
    "Node",
    "NodeStatus",
    "Outcome",
    "Split",
    "counts_as",
]


@dataclass(frozen=True)
class Node:
    """One agent codebase in the clade tree: a commit plus what produced it."""

    id: str
    parent: str | None
    commit: str
    created: float
    origin: str
    status: NodeStatus = NodeStatus.VALID
    reason: str | None = None
    instructions: str | None = None
    tokens: int = 0
    cost_usd: float = 0.0

    @property
    def valid(self) -> bool:
        return self.status == NodeStatus.VALID


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
    split: Split = Split.DEV
    """The task split: the search counts `dev` results; `heldout` only scores the final agent."""


@dataclass(frozen=True)
class Job:
    """One unit of dispatched work (an expansion or an evaluation) and its state."""

    id: int
    kind: JobKind
    node: str
    task: str | None
    state: JobState
    started: float
    finished: float | None = None
    detail: str | None = None
    """Text for people (why it failed or was cancelled); nothing reads state back from it."""
    split: Split | None = None
    """An evaluation's split: `dev` (the search counts it) or `heldout` (final scoring only)."""
    attempt: int = 1
    """1, or 1 + the attempts of the same work that an interruption cut short."""
    requeue_of: int | None = None
    """The interrupted job this one runs again (each is run again at most once)."""
    decision: int | None = None
    """The ordinal of the search decision that made this job (shared by its re-runs); None for
    held-out scoring and jobs outside a runner."""

    @property
    def draw(self) -> int:
        """What the job's random choices are seeded by, with the run seed: its search decision, which a re-run
        of it after a resume shares (its job id is new), else its id."""
        return self.decision if self.decision is not None else self.id
