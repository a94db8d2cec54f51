"""How a run (one session of it) ended, and why: a `StopReason` and its text for people."""

from __future__ import annotations

from dataclasses import dataclass

from evolve.archive.vocab import StopReason


@dataclass(frozen=True)
class RunOutcome:
    """How a run (or one session of it) ended."""

    stop_reason: str
    """Why, for people, with the figures (`evaluation budget spent (20/20)`); `stop` says which."""
    best_node: str | None
    heldout_passed: int
    heldout_total: int
    evaluations_used: int
    nodes: int
    heldout_scored: bool = False
    signal: int | None = None
    """The signal that stopped or cancelled the run (the CLI exits with 128 + it), if any."""
    stop: StopReason = StopReason.STOPPED
    seed_node: str | None = None
    """The seed (the tree's root), where it was scored on the held-out tasks beside the final agent."""


@dataclass(frozen=True)
class Stopping:
    """A reason to stop, and its text for people."""

    reason: StopReason
    text: str

    @classmethod
    def of(cls, reason: StopReason, figures: str = "") -> Stopping:
        return cls(reason, f"{reason} {figures}" if figures else str(reason))
