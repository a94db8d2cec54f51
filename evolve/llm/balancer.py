"""Many concurrent requests over several replicas of one model: least-loaded, bounded, health-aware.

`LeastLoaded` is a `ChatModel`. Each request goes to the healthy replica with the fewest requests
in flight (ties: the one used longest ago). A replica takes at most `max_in_flight` at once; when
every healthy replica is full, requests wait in a bounded queue, and beyond `max_waiting` (or after
`wait_timeout_s`) they fail at once with `Overloaded`, which says what to change. A replica whose
call fails for a reason of its own (connection refused or reset, timeout, 5xx) is taken out for
`down_for_s` and the request is retried on another; after that it gets one trial request
(half-open) and is back if it answers. A request the server refuses (4xx) fails as it is.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from evolve.llm.client import ChatModel, ModelError
from evolve.llm.types import ChatRequest, ChatResponse


class Overloaded(ModelError):
    """Every replica is busy and the queue is full (or the wait ran out): backpressure, not a crash."""


@dataclass(frozen=True)
class ReplicaStatus:
    """One replica as the balancer sees it."""

    name: str
    healthy: bool
    in_flight: int
    served: int
    failures: int
    last_error: str | None


@dataclass
class _Replica:
    model: ChatModel
    name: str
    in_flight: int = 0
    served: int = 0
    failures: int = 0
    down_until: float | None = None
    probing: bool = False
    last_used: int = 0
    last_error: str | None = None


def replica_failed(error: ModelError) -> bool:
    """Whether a failed call is the replica's fault (retry elsewhere) rather than the request's (4xx)."""
    import anthropic  # the SDKs load with the first model call, not with every `evolve` command
    import openai

    cause = error.__cause__
    if isinstance(cause, openai.APIStatusError | anthropic.APIStatusError):
        return cause.status_code >= 500 or cause.status_code == 429
    return True  # connection refused or reset, timeouts, and failures without an HTTP status


class LeastLoaded:
    """A `ChatModel` over replicas of one model; thread-safe."""

    def __init__(
        self,
        replicas: Sequence[ChatModel],
        *,
        max_in_flight: int = 16,
        max_waiting: int = 256,
        wait_timeout_s: float = 600.0,
        down_for_s: float = 30.0,
        attempts: int | None = None,
        window_s: float | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if not replicas:
            raise ValueError("LeastLoaded needs at least one replica")
        self.name = replicas[0].name
        self._replicas = [
            _Replica(model, getattr(model, "base_url", None) or f"replica-{i}")
            for i, model in enumerate(replicas)
        ]
        self.max_in_flight = max_in_flight
        self.max_waiting = max_waiting
        self.wait_timeout_s = wait_timeout_s
        self.down_for_s = down_for_s
        self.attempts = attempts if attempts is not None else len(replicas) + 1
        self.window_s = window_s
        """No wait in the queue and no new attempt past this many seconds after the call began: the
        role's retry window, so one call ends within `capabilities.worst_case_s` as the agent expects."""
        self._clock = clock
        self._cond = threading.Condition()
        self._waiting = 0
        self._turn = 0

    def health(self) -> list[ReplicaStatus]:
        now = self._clock()
        with self._cond:
            return [
                ReplicaStatus(r.name, self._healthy(r, now), r.in_flight, r.served, r.failures, r.last_error)
                for r in self._replicas
            ]

    def completion_cap(self, request: ChatRequest) -> int:
        return self._replicas[0].model.completion_cap(request)  # replicas of one model share its cap

    def complete(self, request: ChatRequest) -> ChatResponse:
        tried: set[int] = set()
        errors: list[str] = []
        until = None if self.window_s is None else self._clock() + self.window_s
        for _ in range(self.attempts):
            if errors and until is not None and self._clock() >= until:
                break
            index = self._acquire(tried, until)
            replica = self._replicas[index]
            try:
                response = replica.model.complete(request)
            except ModelError as exc:
                if not replica_failed(exc):
                    self._release(index, error=None)
                    raise
                self._release(index, error=f"{type(exc).__name__}: {exc}")
                tried.add(index)
                errors.append(f"{replica.name}: {exc}")
                continue
            self._release(index, error=None)
            return response
        raise ModelError(
            f"no replica of {self.name} answered in {len(errors)} tries: " + "; ".join(errors[-3:])
        )

    # -- the slot bookkeeping (all under self._cond) -----------------------------------------

    @staticmethod
    def _healthy(replica: _Replica, now: float) -> bool:
        return replica.down_until is None or (now >= replica.down_until and not replica.probing)

    def _pick(self, tried: set[int]) -> int | None:
        """The least-loaded usable replica, or None when all usable ones are full."""
        now = self._clock()
        healthy = [i for i, r in enumerate(self._replicas) if self._healthy(r, now)]
        if not healthy:  # all are out: try the one that comes back first rather than refuse
            waiting = [i for i, r in enumerate(self._replicas) if not r.probing]
            healthy = [
                min(waiting or range(len(self._replicas)), key=lambda i: self._replicas[i].down_until or 0.0)
            ]
        fresh = [i for i in healthy if i not in tried] or healthy
        free = [i for i in fresh if self._replicas[i].in_flight < self.max_in_flight]
        if not free:
            return None
        return min(free, key=lambda i: (self._replicas[i].in_flight, self._replicas[i].last_used))

    def _acquire(self, tried: set[int], until: float | None = None) -> int:
        with self._cond:
            index = self._pick(tried)
            if index is None:
                if self._waiting >= self.max_waiting:
                    raise Overloaded(self._overload_message(f"{self._waiting} requests already wait"))
                self._waiting += 1
                start = self._clock()
                deadline = (
                    start + self.wait_timeout_s if until is None else min(start + self.wait_timeout_s, until)
                )
                try:
                    while (index := self._pick(tried)) is None:
                        left = deadline - self._clock()
                        if left <= 0:
                            raise Overloaded(self._overload_message(f"waited {deadline - start:.0f} s"))
                        self._cond.wait(timeout=min(left, 1.0))
                finally:
                    self._waiting -= 1
            replica = self._replicas[index]
            replica.in_flight += 1
            self._turn += 1
            replica.last_used = self._turn
            if replica.down_until is not None:
                replica.probing = True  # the trial request of a replica that was out
            return index

    def _release(self, index: int, *, error: str | None) -> None:
        with self._cond:
            replica = self._replicas[index]
            replica.in_flight -= 1
            replica.probing = False
            if error is None:
                replica.served += 1
                replica.down_until = None
            else:
                replica.failures += 1
                replica.last_error = error
                replica.down_until = self._clock() + self.down_for_s
            self._cond.notify_all()

    def _overload_message(self, why: str) -> str:
        slots = len(self._replicas) * self.max_in_flight
        return (
            f"model {self.name} is overloaded: {why}; {len(self._replicas)} replicas x {self.max_in_flight} "
            f"requests in flight = {slots} slots, queue bound {self.max_waiting}. Lower executor.concurrency "
            f"or add replicas"
        )
