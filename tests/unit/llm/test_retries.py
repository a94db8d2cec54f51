"""The retry layer's rules in isolation: Retry-After forms, the window, the attempt cap, the backoff."""

from __future__ import annotations

import email.utils
import random

import httpx2  # the installed SDKs' transport
import openai
import pytest

from evolve.llm.failures import ModelError
from evolve.llm.retries import Retrier, RetryPolicy, backoff_s, retry_after_s


def _status(
    code: int, headers: dict[str, str] | None = None, body: dict | None = None
) -> openai.APIStatusError:
    response = httpx2.Response(
        code, headers=headers or {}, request=httpx2.Request("POST", "http://x/v1/chat")
    )
    return openai.APIStatusError("failed", response=response, body=body)


def test_retry_after_in_milliseconds_seconds_and_as_an_http_date():
    assert retry_after_s(_status(429, {"retry-after-ms": "250"})) == 0.25
    assert retry_after_s(_status(429, {"retry-after": "7"})) == 7.0
    date = email.utils.formatdate(1_000_030.0, usegmt=True)
    assert retry_after_s(_status(503, {"retry-after": date}), now=lambda: 1_000_000.0) == pytest.approx(30.0)
    assert retry_after_s(_status(503)) is None


def test_backoff_grows_is_capped_and_never_zero():
    policy, rng = RetryPolicy(initial_s=1.0, max_s=8.0), random.Random(0)
    waits = [backoff_s(policy, n, rng) for n in range(1, 8)]
    assert all(0.5 <= w <= 1.0 for w in waits[:1]) and all(4.0 <= w <= 8.0 for w in waits[4:])


class Script:
    def __init__(self, *failures: BaseException) -> None:
        self.failures, self.calls, self.sleeps, self.now = list(failures), 0, [], 0.0

    def __call__(self):
        self.calls += 1
        if self.failures:
            raise self.failures.pop(0)
        return "ok"

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


def _retrier(script: Script, **policy) -> Retrier:
    return Retrier(RetryPolicy(**policy), sleep=script.sleep, clock=lambda: script.now)


def test_a_wait_beyond_the_window_gives_up_at_once():
    script = Script(_status(429, {"retry-after": "3600"}))
    with pytest.raises(ModelError) as caught:
        _retrier(script, window_s=600).call(script)
    assert script.sleeps == [] and caught.value.kind == "unavailable" and caught.value.status == 429


def test_the_attempt_cap_ends_retries_inside_the_window():
    script = Script(*[_status(500)] * 5)
    with pytest.raises(ModelError):
        _retrier(script, attempts=3).call(script)
    assert script.calls == 3


def test_a_spent_quota_is_not_retried_and_stops_the_run():
    script = Script(_status(429, body={"error": {"message": "quota", "code": "insufficient_quota"}}))
    with pytest.raises(ModelError) as caught:
        _retrier(script).call(script)
    assert script.calls == 1 and caught.value.kind == "auth"
