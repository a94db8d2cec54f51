"""The engine's vocabulary: what an evaluation ends as, what a job is and where it stands, which split
a task is in, why a run stopped.

Each word is a `StrEnum` member stored in the archive as its value, so it equals the string earlier
versions wrote (`Outcome.PASS == "pass"`) and runs made by them read as they are. A value read from a
database that is not in the vocabulary is refused with one line naming it and its column.
"""

from __future__ import annotations

from enum import StrEnum
from functools import cache
from typing import TypeVar

from evolve.errors import EvolveError


class Outcome(StrEnum):
    """How one graded attempt ended. `infra`: the engine, Docker or the model server failed (retried,
    never counted for or against the agent). `forged`: the grader caught the tested code writing its own
    verdict (a canary test reported passed, or not reported failed: evolve.tasks.grader_canaries); a
    failure to every policy, and its node is flagged in `evolve status`, `evolve show` and the report."""

    PASS = "pass"
    FAIL = "fail"
    TIMEOUT = "timeout"
    ERROR = "error"
    INFRA = "infra"
    FORGED = "forged"

    @property
    def counts(self) -> bool | None:
        """True for a success, False for a failure, None for an outcome that does not count."""
        return None if self is Outcome.INFRA else self is Outcome.PASS


class JobKind(StrEnum):
    """What a dispatched job does: grade a node on a task, or make a child of a node."""

    EVALUATE = "evaluate"
    EXPAND = "expand"


class JobState(StrEnum):
    """`started` is written before the work; a job ends `finished`, `failed` or `cancelled`."""

    STARTED = "started"
    FINISHED = "finished"
    FAILED = "failed"
    CANCELLED = "cancelled"


class Split(StrEnum):
    """The search counts `dev` results; `heldout` only scores the final agent."""

    DEV = "dev"
    HELDOUT = "heldout"


class NodeStatus(StrEnum):
    VALID = "valid"
    INVALID = "invalid"


class StopReason(StrEnum):
    """Why a run (one session of it) stopped; the run's outcome adds the figures in its text."""

    STOP_REQUESTED = "stop requested"
    CANCELLED = "cancelled"
    STOPPED = "stopped"
    MODEL_REFUSED = "the model provider refused the engine"
    EVALUATION_BUDGET = "evaluation budget spent"
    EXPANSION_BUDGET = "expansion budget spent"
    TOKEN_BUDGET = "token budget spent"
    DOLLAR_BUDGET = "dollar budget spent"
    CPU_HOUR_BUDGET = "CPU-hour budget spent"
    WALL_CLOCK_BUDGET = "wall-clock budget spent"
    INFRA_STREAK = "infrastructure failures in a row"
    INVALID_STREAK = "invalid expansions in a row"
    SOLVED = "a node passed every search task"
    POLICY = "the policy stopped"


OUTCOMES: tuple[Outcome, ...] = tuple(Outcome)
FAILURE_OUTCOMES: frozenset[Outcome] = frozenset(
    {Outcome.FAIL, Outcome.TIMEOUT, Outcome.ERROR, Outcome.FORGED}
)
JOB_STATES: tuple[JobState, ...] = tuple(JobState)


def counts_as(outcome: str) -> bool | None:
    """True for a success, False for a failure, None for an outcome that does not count (infra)."""
    member = _members(Outcome).get(outcome)
    if member is None:
        raise ValueError(f"unknown outcome {outcome!r}; expected one of {', '.join(OUTCOMES)}")
    return member.counts


class UnknownValue(EvolveError):
    """A database holds a value the vocabulary does not know (a newer or damaged run)."""


Word = TypeVar("Word", bound=StrEnum)


@cache
def _members(vocabulary: type[Word]) -> dict[str, Word]:
    return {member.value: member for member in vocabulary}


def parse(vocabulary: type[Word], value: object, column: str) -> Word:
    """The member stored as `value` in `column` (e.g. `jobs.kind`); one clear error if there is none."""
    member = _members(vocabulary).get(value) if isinstance(value, str) else None
    if member is None:
        raise UnknownValue(
            f"unknown value {value!r} in column {column} "
            f"(this evolve knows {', '.join(_members(vocabulary))})"
        )
    return member


def parse_split(value: str | None, option: str = "--split") -> Split | None:
    """A split named on the command line; an unknown name is one clear line, before any work starts."""
    if value is None:
        return None
    if value not in _members(Split):
        raise EvolveError(f"{option} {value}: no such split (the splits are {', '.join(_members(Split))})")
    return Split(value)


def parse_optional(vocabulary: type[Word], value: object, column: str) -> Word | None:
    return None if value is None else parse(vocabulary, value, column)


def sql_one_of(vocabulary: type[StrEnum]) -> str:
    """The values as an SQL list for a CHECK constraint: `'a', 'b'`."""
    return ", ".join(f"'{member.value}'" for member in vocabulary)
