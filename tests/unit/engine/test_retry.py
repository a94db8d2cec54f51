"""InfraRetry, the one retry rule: infra attempts are tried again, up to `retries` times, never after a
stop."""

from __future__ import annotations

from evolve.engine.retry import InfraRetry


def _script(*outcomes: str):
    seen: list[int] = []

    def attempt(number: int) -> str:
        seen.append(number)
        return outcomes[number]

    return attempt, seen


def test_infra_is_tried_again_until_an_attempt_is_not_infra():
    attempt, seen = _script("infra", "infra", "pass")
    retried: list[str] = []
    assert InfraRetry(2).run(attempt, lambda r: r == "infra", before_retry=retried.append) == "pass"
    assert seen == [0, 1, 2] and retried == ["infra", "infra"]


def test_the_last_infra_attempt_is_the_result_and_is_not_retried():
    attempt, seen = _script("infra", "infra", "infra", "pass")
    retried: list[str] = []
    assert InfraRetry(2).run(attempt, lambda r: r == "infra", before_retry=retried.append) == "infra"
    assert seen == [0, 1, 2] and len(retried) == 2


def test_an_outcome_of_the_agent_is_never_retried_and_a_stop_ends_retries():
    attempt, seen = _script("fail", "pass")
    assert InfraRetry(2).run(attempt, lambda r: r == "infra") == "fail" and seen == [0]
    attempt, seen = _script("infra", "pass")
    assert InfraRetry(2).run(attempt, lambda r: r == "infra", stop=lambda: True) == "infra" and seen == [0]
