"""Clients: retries on transient failures only, token and dollar accounting, Anthropic translation."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from evolve.llm.anthropic_wire import anthropic_payload, anthropic_response
from evolve.llm.client import ModelError, OpenAICompatible, RetryPolicy, RoundRobin, host_key
from evolve.llm.types import ChatRequest, Message, ToolCall
from evolve.models.pricing import FREE, price_of
from evolve.standins.models import FakeOpenAIServer, ScriptedModel

FAST = RetryPolicy(attempts=4, initial_s=0.01, max_s=0.02)


def _ask(text: str = "hello there") -> ChatRequest:
    return ChatRequest(messages=(Message(role="user", content=text),))


def test_a_server_that_fails_twice_then_answers_is_retried():
    with FakeOpenAIServer(failures=2, fail_status=503) as server:
        model = OpenAICompatible(server.base_url, "fake", retry=FAST)
        response = model.complete(_ask())
    assert response.message.content == "ok"
    assert server.chat_requests == 3


def test_rate_limits_are_retried_until_attempts_run_out():
    with FakeOpenAIServer(failures=10, fail_status=429) as server:
        model = OpenAICompatible(server.base_url, "fake", retry=FAST)
        with pytest.raises(ModelError, match="RateLimitError"):
            model.complete(_ask())
    assert server.chat_requests == FAST.attempts


def test_a_client_error_is_not_retried():
    with FakeOpenAIServer(failures=10, fail_status=400) as server:
        model = OpenAICompatible(server.base_url, "fake", retry=FAST)
        with pytest.raises(ModelError, match="BadRequest"):
            model.complete(_ask())
    assert server.chat_requests == 1


def test_tokens_and_dollars_are_counted():
    with FakeOpenAIServer() as server:
        local = OpenAICompatible(server.base_url, "fake", retry=FAST)
        hosted = OpenAICompatible(server.base_url, "gpt-4o-mini", retry=FAST, price=price_of("gpt-4o-mini"))
        free = local.complete(_ask("one two three")).usage
        paid = hosted.complete(_ask("one two three")).usage
    assert (free.prompt_tokens, free.completion_tokens, free.cost_usd) == (3, 1, 0.0)
    assert paid.cost_usd == pytest.approx((3 * 0.15 + 1 * 0.60) / 1e6)


def test_prices_match_the_longest_known_prefix_and_local_models_are_free():
    assert price_of("gpt-4o-mini-2024-07-18") == price_of("gpt-4o-mini")
    assert price_of("gpt-4o-2024-08-06").input_per_mtok == 2.50
    assert price_of("qwen2.5-coder-0.5b-instruct") == FREE


def test_a_missing_host_key_is_a_clear_error(monkeypatch):
    monkeypatch.delenv("EVOLVE_TEST_KEY", raising=False)
    with pytest.raises(ModelError, match="EVOLVE_TEST_KEY"):
        host_key("EVOLVE_TEST_KEY")


def test_round_robin_spreads_requests_over_replicas():
    a, b = ScriptedModel(["a"], name="m"), ScriptedModel(["b"], name="m")
    spread = RoundRobin([a, b])
    replies = [spread.complete(_ask()).message.content for _ in range(4)]
    assert replies == ["a", "b", "a", "b"]


def test_anthropic_translation_of_system_tools_and_tool_results():
    request = ChatRequest(
        messages=(
            Message(role="system", content="be brief"),
            Message(role="user", content="list files"),
            Message(
                role="assistant", tool_calls=(ToolCall(id="t1", name="bash", arguments='{"cmd": "ls"}'),)
            ),
            Message(role="tool", tool_call_id="t1", content="a.py"),
        ),
        tools=({"type": "function", "function": {"name": "bash", "parameters": {"type": "object"}}},),
    )
    payload = anthropic_payload(request, "claude-sonnet-4", 100)
    assert payload["system"] == "be brief"
    assert [turn["role"] for turn in payload["messages"]] == ["user", "assistant", "user"]
    assert payload["messages"][1]["content"][0] == {
        "type": "tool_use",
        "id": "t1",
        "name": "bash",
        "input": {"cmd": "ls"},
    }
    assert payload["messages"][2]["content"][0]["type"] == "tool_result"
    assert payload["tools"][0]["input_schema"] == {"type": "object"}

    raw = SimpleNamespace(
        content=[
            SimpleNamespace(type="text", text="running"),
            SimpleNamespace(type="tool_use", id="t2", name="bash", input={"cmd": "pwd"}),
        ],
        usage=SimpleNamespace(input_tokens=1000, output_tokens=10),
        stop_reason="tool_use",
    )
    response = anthropic_response(raw, "claude-sonnet-4", price_of("claude-sonnet-4"))
    assert response.finish_reason == "tool_calls"
    assert json.loads(response.message.tool_calls[0].arguments) == {"cmd": "pwd"}
    assert response.usage.cost_usd == pytest.approx((1000 * 3 + 10 * 15) / 1e6)
