"""What the runner tells an observer (an experiment tracker) as the run happens: one event per result it
records, at the one place it records it, and one when the run ends.

An observer is called on the runner's thread right after the archive holds the result, so it may read
the archive for anything else it shows; it must not raise (evolve.tracking turns its own failures into
a warning line) and should not block (a tracker sends from its own thread).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from evolve.archive.records import Job
from evolve.archive.vocab import Outcome, Split
from evolve.engine.outcome import RunOutcome


@dataclass(frozen=True)
class Evaluated:
    """An evaluation recorded: `node` on `task` of `split`, with what its job spent."""

    job: Job
    node: str
    task: str
    split: Split
    outcome: Outcome
    tokens: int
    cost_usd: float


@dataclass(frozen=True)
class Expanded:
    """An expansion recorded: `parent` grew `child` (valid or not)."""

    job: Job
    parent: str
    child: str
    valid: bool
    tokens: int
    cost_usd: float


@dataclass(frozen=True)
class Finished:
    """The run ended (this session of it: a resume sends more events later)."""

    outcome: RunOutcome


RunEvent = Evaluated | Expanded | Finished


class RunEvents(Protocol):
    def record(self, event: RunEvent) -> None: ...
