"""Token reservation: clamped completions, no overshoot together, settled with actual usage."""

from __future__ import annotations

from evolve.llm.budget import Grant, Refusal, TokenLedger, prompt_token_bound
from evolve.llm.types import ChatRequest, Message


def _request(text: str) -> ChatRequest:
    return ChatRequest(messages=(Message(role="user", content=text),))


def test_the_prompt_bound_is_at_least_its_bytes():
    assert prompt_token_bound(_request("héllo")) >= len("héllo".encode())


def test_the_completion_the_model_wants_is_clamped_to_what_is_left():
    ledger = TokenLedger(budget=100)
    prompt = prompt_token_bound(_request("hi"))
    grant = ledger.reserve("j", _request("hi"), 1000)
    assert isinstance(grant, Grant) and grant.max_tokens == 100 - prompt
    small = TokenLedger(budget=100).reserve("j", _request("hi"), 5)
    assert isinstance(small, Grant) and small.max_tokens == 5


def test_reservations_together_never_pass_the_budget():
    ledger = TokenLedger(budget=200)
    grants = [ledger.reserve("j", _request("hi"), None) for _ in range(10)]
    granted = [g for g in grants if isinstance(g, Grant)]
    assert sum(g.reserved for g in granted) <= 200
    refusal = grants[-1]
    assert isinstance(refusal, Refusal)
    assert "held by requests in flight" in refusal.message and "0 left" in refusal.message


def test_settling_frees_what_was_not_used():
    ledger = TokenLedger(budget=100)
    grant = ledger.reserve("j", _request("hi"), None)
    assert isinstance(grant, Grant) and ledger.left == 0
    ledger.settle(grant, 30)
    assert (ledger.used, ledger.reserved, ledger.left) == (30, 0, 70)
    failed = ledger.reserve("j", _request("hi"), None)
    assert isinstance(failed, Grant)
    ledger.release(failed)
    assert ledger.left == 70
