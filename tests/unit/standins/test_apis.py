"""The real SDK clients against the stand-in server that answers as the providers document: tool
use, refusals, cached tokens, Retry-After, 529, context overflow, spent quota, a bad key."""

from __future__ import annotations

import json

import pytest

from evolve.llm.client import AnthropicModel, ModelError, OpenAIModel
from evolve.llm.retries import RetryPolicy
from evolve.llm.types import ChatRequest, Message
from evolve.models.pricing import price_of
from evolve.standins import apis as s

TOOLS = ({"type": "function", "function": {"name": "bash", "parameters": {"type": "object"}}},)


@pytest.fixture(autouse=True)
def keys(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")


class Clock:
    """A fake monotonic clock that the recorded sleeps advance."""

    def __init__(self) -> None:
        self.now = 0.0
        self.sleeps: list[float] = []

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


def _ask(text: str = "hello", **extra: object) -> ChatRequest:
    return ChatRequest(messages=(Message(role="user", content=text),), **extra)


def _openai(server: s.StandinServer, model: str = "gpt-4o", clock: Clock | None = None, **kw) -> OpenAIModel:
    client = OpenAIModel(model, base_url=server.url + "/v1", sleep=(clock or Clock()).sleep, **kw)
    if clock is not None:
        client._retrier._clock = lambda: clock.now
    return client


def _anthropic(
    server: s.StandinServer, model: str = "claude-3-5-sonnet-20241022", clock: Clock | None = None, **kw
) -> AnthropicModel:
    client = AnthropicModel(model, base_url=server.url, sleep=(clock or Clock()).sleep, **kw)
    if clock is not None:
        client._retrier._clock = lambda: clock.now
    return client


# -- shapes ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("model", ["o1", "o3-mini", "gpt-5-mini"])
def test_a_reasoning_model_is_called_with_the_arguments_it_accepts(model):
    with s.StandinServer([s.openai_text("done")]) as server:
        reply = _openai(server, model).complete(_ask(temperature=0.5, max_tokens=100, stop=("x",)))
    assert reply.message.content == "done"
    sent = server.seen[0].body
    assert "temperature" not in sent and "stop" not in sent and sent["max_completion_tokens"] == 25_000


def test_openai_tool_calls_refusals_and_cached_tokens():
    answers = [
        s.openai_tool_call("bash", {"cmd": "ls"}),
        s.openai_refusal(),
        s.openai_text("hi", prompt=1_000_000, completion=0, cached=800_000),
    ]
    with s.StandinServer(answers) as server:
        model = _openai(server, "gpt-4o")
        call, refusal, cached = (model.complete(_ask(tools=TOOLS)) for _ in range(3))
    assert call.finish_reason == "tool_calls" and json.loads(call.message.tool_calls[0].arguments) == {
        "cmd": "ls"
    }
    assert refusal.finish_reason == "content_filter" and "can't help" in refusal.message.content
    assert cached.usage.cached_prompt_tokens == 800_000
    assert cached.usage.cost_usd == pytest.approx(0.2 * 2.50 + 0.8 * 1.25)  # cached input at half price
    assert server.seen[0].headers["authorization"] == "Bearer sk-test"


def test_anthropic_tool_use_refusal_and_cache_tokens():
    answers = [
        s.anthropic_tool_use("bash", {"cmd": "ls"}),
        s.anthropic_refusal(),
        s.anthropic_text("hi", input_tokens=100, output_tokens=10, cache_read=1000, cache_write=200),
    ]
    with s.StandinServer(answers) as server:
        model = _anthropic(server)
        call, refusal, cached = (model.complete(_ask(tools=TOOLS, tool_choice="auto")) for _ in range(3))
    assert call.finish_reason == "tool_calls" and call.message.tool_calls[0].name == "bash"
    assert call.message.content == "Running it."
    assert refusal.finish_reason == "content_filter"
    usage = cached.usage
    assert (usage.prompt_tokens, usage.cached_prompt_tokens, usage.cache_write_tokens) == (1300, 1000, 200)
    assert usage.cost_usd == pytest.approx((100 * 3 + 1000 * 0.3 + 200 * 3.75 + 10 * 15) / 1e6)
    sent = server.seen[0].body
    assert sent["tool_choice"] == {"type": "auto"} and "temperature" not in sent
    headers = server.seen[0].headers
    assert "sk-ant-test" in headers.get("x-api-key", "") + headers.get("authorization", "")


def test_an_empty_conversation_is_the_requests_fault_and_never_sent():
    request = ChatRequest(
        messages=(Message(role="system", content="x"), Message(role="assistant", content=" "))
    )
    with s.StandinServer([s.anthropic_text()]) as server, pytest.raises(ModelError) as caught:
        _anthropic(server).complete(request)
    assert caught.value.kind == "request" and server.seen == []


# -- retries -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("limited", "ok", "wait"),
    [
        (s.openai_rate_limited(20), s.openai_text(), 20.0),
        (
            s.openai_error(429, "slow down", "requests", headers={"retry-after-ms": "1500"}),
            s.openai_text(),
            1.5,
        ),
    ],
)
def test_the_servers_retry_after_is_honoured(limited, ok, wait):
    clock = Clock()
    with s.StandinServer([limited, ok]) as server:
        assert _openai(server, clock=clock).complete(_ask()).message.content == "ok"
    assert clock.sleeps == [wait] and len(server.seen) == 2


def test_anthropic_retry_after_is_honoured():
    clock = Clock()
    with s.StandinServer([s.anthropic_rate_limited(7), s.anthropic_text("fine")]) as server:
        assert _anthropic(server, clock=clock).complete(_ask()).message.content == "fine"
    assert clock.sleeps == [7.0]


@pytest.mark.parametrize("status", [408, 409, 500, 503])
def test_timeouts_conflicts_and_server_errors_are_retried(status):
    clock = Clock()
    with s.StandinServer([s.openai_server_error(status), s.openai_text("back")]) as server:
        assert _openai(server, clock=clock).complete(_ask()).message.content == "back"
    assert len(server.seen) == 2 and 0.5 <= clock.sleeps[0] <= 1.0


def test_a_persistent_529_is_retried_for_the_whole_window_then_is_unavailable():
    clock = Clock()
    with s.StandinServer([s.anthropic_overloaded()]) as server, pytest.raises(ModelError) as caught:
        _anthropic(server, clock=clock, retry=RetryPolicy(window_s=300, max_s=60)).complete(_ask())
    assert caught.value.kind == "unavailable" and caught.value.status == 529
    assert 240 <= sum(clock.sleeps) <= 300 and len(server.seen) == len(clock.sleeps) + 1
    assert max(clock.sleeps) <= 60


def test_jitter_comes_from_the_seeded_generator():
    def waits(seed: int) -> list[float]:
        clock = Clock()
        with s.StandinServer([s.openai_server_error(503)] * 4 + [s.openai_text()]) as server:
            _openai(server, clock=clock, retry=RetryPolicy(seed=seed)).complete(_ask())
        return clock.sleeps

    assert waits(1) == waits(1) != waits(2)


@pytest.mark.parametrize(
    ("answer", "kind"),
    [
        (s.openai_quota_spent(), "auth"),
        (s.openai_bad_key(), "auth"),
        (s.openai_context_overflow(), "context"),
        (
            s.openai_error(400, "Invalid value for 'messages'", "invalid_request_error", "invalid_value"),
            "request",
        ),
        (
            s.openai_error(
                404, "The model `gpt-9` does not exist", "invalid_request_error", "model_not_found"
            ),
            "auth",
        ),
        (
            s.openai_error(
                400, "Unsupported parameter: 'stop'", "invalid_request_error", "unsupported_parameter", "stop"
            ),
            "internal",
        ),
    ],
)
def test_openai_failures_that_waiting_cannot_fix_are_not_retried(answer, kind):
    clock = Clock()
    with s.StandinServer([answer, s.openai_text()]) as server, pytest.raises(ModelError) as caught:
        _openai(server, clock=clock).complete(_ask())
    assert caught.value.kind == kind and len(server.seen) == 1 and clock.sleeps == []
    assert caught.value.provider_message == answer.body["error"]["message"]


@pytest.mark.parametrize(
    ("answer", "kind"),
    [
        (s.anthropic_context_overflow(), "context"),
        (s.anthropic_bad_key(), "auth"),
        (
            s.anthropic_error(400, "invalid_request_error", "tools.0.name: String should match pattern"),
            "request",
        ),
    ],
)
def test_anthropic_failures_that_waiting_cannot_fix_are_not_retried(answer, kind):
    with s.StandinServer([answer, s.anthropic_text()]) as server, pytest.raises(ModelError) as caught:
        _anthropic(server).complete(_ask())
    assert caught.value.kind == kind and len(server.seen) == 1


def test_a_connection_error_is_retried_then_unavailable():
    clock = Clock()
    model = OpenAIModel(
        "gpt-4o", base_url="http://127.0.0.1:9/v1", sleep=clock.sleep, retry=RetryPolicy(window_s=10)
    )
    model._retrier._clock = lambda: clock.now
    with pytest.raises(ModelError) as caught:
        model.complete(_ask())
    assert caught.value.kind == "unavailable" and len(clock.sleeps) >= 3


def test_a_client_bug_is_an_internal_failure_not_a_crash():
    with s.StandinServer([s.openai_text()]) as server:
        model = _openai(server)
        model._client.chat.completions.create = lambda **kw: (_ for _ in ()).throw(
            TypeError("unexpected kwarg")
        )
        with pytest.raises(ModelError) as caught:
            model.complete(_ask())
    assert caught.value.kind == "internal" and "unexpected kwarg" in str(caught.value)


def test_prices_are_exact_or_by_dated_family_never_by_prefix():
    assert price_of("o3-pro-2025-06-10").input_per_mtok == 20.0  # not o3's 2.00
    assert price_of("gpt-4o-2024-05-13").input_per_mtok == 5.0
    assert price_of("gpt-4o-2024-08-06").input_per_mtok == 2.5
    assert price_of("claude-3-5-sonnet-20241022").output_per_mtok == 15.0
    assert price_of("o1-2024-12-17").input_per_mtok == 15.0
    assert price_of("gpt-5-mini-2025-08-07").input_per_mtok == 0.25
    assert price_of("claude-opus-4-1-20250805").input_per_mtok == 15.0
    assert price_of("gpt-4o-mini-audio-preview").input_per_mtok == 0.0  # unknown: no price by prefix
