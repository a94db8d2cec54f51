"""The one retry rule for `infra` attempts (docs/design.md §Security: infra is retried, never counted
against the agent).

An attempt is infra when the engine, a sandbox, the model upstream (the gateway's own report) or a
cluster node failed; never from anything the agent's code printed or returned. Every caller that
retries (the engine worker, locally and on a cluster; `evaluate`, which records each attempt as a
job) goes through `InfraRetry.run`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

R = TypeVar("R")


def _never() -> bool:
    return False


def _nothing(result: object) -> None:
    return None


@dataclass(frozen=True)
class InfraRetry:
    retries: int = 2
    """Extra attempts after an infra attempt."""

    def run(
        self,
        attempt: Callable[[int], R],
        is_infra: Callable[[R], bool],
        *,
        before_retry: Callable[[R], None] = _nothing,
        stop: Callable[[], bool] = _never,
    ) -> R:
        """`attempt(0)`, then again while its result is infra, `retries` times at most or until `stop()`.

        `before_retry(result)` sees each infra result that is tried again; the last result is returned."""
        number = 0
        while True:
            result = attempt(number)
            if not is_infra(result) or number >= self.retries or stop():
                return result
            before_retry(result)
            number += 1
