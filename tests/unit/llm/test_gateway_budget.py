"""The job's token budget bounds what each real client sends, through the gateway and the SDKs against
the stand-in server: a reasoning model, which ignores the agent's own small cap, still never gets more
completion tokens than the job has left, alone or with other requests in flight."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from evolve.llm.agent_request import request_from_openai
from evolve.llm.budget import prompt_token_bound
from evolve.llm.client import AnthropicModel, OpenAICompatible, OpenAIModel
from evolve.llm.exchanges import request_digest
from evolve.llm.retries import RetryPolicy
from evolve.llm.types import ChatRequest, Message
from evolve.models.capabilities import REASONING_MAX_TOKENS
from evolve.standins import apis as s

ONCE = RetryPolicy(attempts=1)

pytestmark = pytest.mark.usefixtures("api_keys")


def _prompt(chat, text: str) -> int:
    return prompt_token_bound(request_from_openai(chat(text)))


def test_a_reasoning_model_never_gets_more_than_the_job_has_left(post, chat, gateway_for):
    with s.StandinServer([s.openai_text("done", prompt=10, completion=2)]) as server:
        model = OpenAIModel("o4-mini", base_url=server.url + "/v1", retry=ONCE)
        with gateway_for(model) as gateway:
            job = gateway.open_job("j", "n", "solve", token_budget=1000)
            statuses = [post(job.socket_path, chat("hi", max_tokens=100))[0] for _ in range(2)]
    assert statuses == [200, 200]
    sent = [seen.body["max_completion_tokens"] for seen in server.seen]
    left = [1000, 1000 - 12]  # the first call's usage (10 + 2) settled before the second
    assert sent == [room - _prompt(chat, "hi") for room in left]
    assert all("max_tokens" not in seen.body for seen in server.seen)


def test_a_reasoning_model_gets_its_family_default_when_the_budget_allows(post, chat, gateway_for):
    with s.StandinServer([s.openai_text("done")]) as server:
        model = OpenAIModel("gpt-5-mini", base_url=server.url + "/v1", retry=ONCE)
        with gateway_for(model) as gateway:
            job = gateway.open_job("j", "n", "solve", token_budget=100_000)
            assert post(job.socket_path, chat("hi", max_tokens=100))[0] == 200  # the agent's own cap: ignored
    assert server.seen[0].body["max_completion_tokens"] == REASONING_MAX_TOKENS


class _Slow:
    """The real client, held in flight a while; tracks the most completion tokens sent at once."""

    def __init__(self, inner: OpenAIModel) -> None:
        self.name = inner.name
        self.completion_cap = inner.completion_cap
        self._inner = inner
        self._lock = threading.Lock()
        self._in_flight = 0
        self.most = 0

    def complete(self, request: ChatRequest):
        cap = self._inner.arguments(request)["max_completion_tokens"]  # what the SDK call will carry
        with self._lock:
            self._in_flight += prompt_token_bound(request) + cap
            self.most = max(self.most, self._in_flight)
        try:
            time.sleep(0.3)
            return self._inner.complete(request)
        finally:
            with self._lock:
                self._in_flight -= prompt_token_bound(request) + cap


def test_concurrent_reasoning_requests_cannot_together_pass_the_budget(post, chat, gateway_for):
    budget = 60_000
    with s.StandinServer([s.openai_text("done")]) as server:
        model = _Slow(OpenAIModel("o3", base_url=server.url + "/v1", retry=ONCE))
        with gateway_for(model) as gateway:
            job = gateway.open_job("j", "n", "solve", token_budget=budget)
            with ThreadPoolExecutor(6) as pool:
                statuses = list(
                    pool.map(lambda _: post(job.socket_path, chat("hi", max_tokens=100))[0], range(6))
                )
    assert 200 in statuses and 403 in statuses
    assert REASONING_MAX_TOKENS < model.most <= budget  # several in flight at once, never past the budget
    assert all(seen.body["max_completion_tokens"] <= budget for seen in server.seen)


@pytest.mark.parametrize("provider", ["anthropic", "openai-compatible"])
def test_models_that_honour_the_callers_cap_get_it_within_the_budget(post, chat, provider, gateway_for):
    answer = s.anthropic_text("done") if provider == "anthropic" else s.openai_text("done")
    with s.StandinServer([answer]) as server:
        model = (
            AnthropicModel("claude-3-5-sonnet-20241022", base_url=server.url, retry=ONCE, max_tokens=4096)
            if provider == "anthropic"
            else OpenAICompatible(server.url + "/v1", "local", retry=ONCE, max_tokens=4096)
        )
        with gateway_for(model) as gateway:
            small = gateway.open_job("small", "n", "solve", token_budget=500)
            assert post(small.socket_path, chat("hi", max_tokens=3000))[0] == 200
            roomy = gateway.open_job("roomy", "n", "solve", token_budget=100_000)
            assert post(roomy.socket_path, chat("hi", max_tokens=50))[0] == 200
    assert [seen.body["max_tokens"] for seen in server.seen] == [500 - _prompt(chat, "hi"), 50]


def test_the_ceiling_is_left_out_of_records_and_digests():
    asked = ChatRequest(messages=(Message(role="user", content="hi"),), max_tokens=100)
    capped = asked.model_copy(update={"ceiling": 7})
    assert request_digest(capped) == request_digest(asked)
    assert "ceiling" not in capped.model_dump(mode="json") and "ceiling" not in capped.model_dump_json()
