"""The one retry layer between the gateway and a provider (the SDKs' own retries are off).

Rules, as OpenAI's and Anthropic's SDKs document them: retry 408, 409, 429 (not
`insufficient_quota`), every 5xx (529 "overloaded" included) and connection errors; wait what the
server asks (`retry-after-ms`, else `retry-after` in seconds or as an HTTP date), else an
exponential backoff with jitter from a seeded generator; keep going for a window of time, not a
count, so a provider that is down for minutes is waited out; never retry any other 4xx.
"""

from __future__ import annotations

import email.utils
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from evolve.llm.failures import ModelError, model_error, retryable, status_error


@dataclass(frozen=True)
class RetryPolicy:
    """How long and how patiently transient failures are retried."""

    window_s: float = 600.0
    """No new attempt starts after this many seconds since the first."""
    initial_s: float = 1.0
    max_s: float = 60.0
    attempts: int | None = None
    """An extra cap on attempts (a balancer's replica fails fast with 1; the balancer retries)."""
    seed: int = 0
    """Seeds the jitter (every random choice in the engine comes from a seeded generator)."""


def retry_after_s(exc: BaseException, now: Callable[[], float] = time.time) -> float | None:
    """The wait the server asked for, in seconds, or None."""
    error = status_error(exc)
    if error is None:
        return None
    headers = error.response.headers
    for name, scale in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            return max(float(value) / scale, 0.0)
        except ValueError:
            parsed = email.utils.parsedate_tz(value)
            if parsed is not None:  # an HTTP date
                return max(float(email.utils.mktime_tz(parsed)) - now(), 0.0)
    return None


def backoff_s(policy: RetryPolicy, retry: int, rng: random.Random) -> float:
    """Exponential backoff with "equal jitter": half fixed, half drawn, so waits never collapse to 0."""
    ceiling = min(policy.max_s, policy.initial_s * 2 ** (retry - 1))
    return ceiling / 2 + rng.uniform(0, ceiling / 2)


class Retrier:
    """Runs calls under one policy; thread-safe (random.Random's draws are atomic under the GIL)."""

    def __init__(
        self,
        policy: RetryPolicy = RetryPolicy(),
        *,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.policy = policy
        self._rng = random.Random(policy.seed)
        self._sleep = sleep
        self._clock = clock

    def call(self, call: Callable[[], Any]) -> Any:
        """Run `call`; the final failure becomes a `ModelError` whose `kind` says what it was."""
        import anthropic  # the SDKs load with the first model call, not with every `evolve` command
        import openai

        deadline = self._clock() + self.policy.window_s
        attempt = 0
        while True:
            attempt += 1
            try:
                return call()
            except (openai.APIError, anthropic.APIError) as exc:
                delay = self._delay(exc, attempt, deadline)
                if delay is None:
                    raise model_error(exc) from exc
            except ModelError:
                raise
            # a client bug (e.g. an argument the SDK no longer takes): infra, no retry
            except Exception as exc:
                raise model_error(exc) from exc
            self._sleep(delay)

    def _delay(self, exc: BaseException, attempt: int, deadline: float) -> float | None:
        """The wait before the next attempt, or None when this failure is final."""
        if not retryable(exc):
            return None
        if self.policy.attempts is not None and attempt >= self.policy.attempts:
            return None
        asked = retry_after_s(exc)
        delay = asked if asked is not None else backoff_s(self.policy, attempt, self._rng)
        if self._clock() + delay > deadline:
            return None  # the next attempt would start after the window: give up now, not later
        return delay
