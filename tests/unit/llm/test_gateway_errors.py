"""Which outcome each upstream failure becomes, through the real gateway and SDK clients against the
stand-in server: the request's fault is a 4xx the agent reads (its failure), the service's is a 5xx
(`infra`), a refused engine key also stops the run; nothing kills the gateway's handler thread."""

from __future__ import annotations

import json

import pytest

from evolve.llm.client import AnthropicModel, OpenAIModel
from evolve.llm.gateway import Gateway
from evolve.llm.retries import RetryPolicy
from evolve.llm.types import ChatRequest, ChatResponse
from evolve.standins import apis as s
from evolve.standins.models import fake_completion_cap

NO_WAIT = RetryPolicy(window_s=0.5, initial_s=0.01, max_s=0.02)

pytestmark = pytest.mark.usefixtures("api_keys")


def outcome(status: int, gateway: Gateway) -> str:
    """What the engine makes of an answer: a run stop, infra (5xx), or the agent's own failure (4xx)."""
    if gateway.fatal is not None:
        return "run stop"
    return "infra" if status >= 500 else "agent failure" if status >= 400 else "ok"


CASES = [
    ("openai", s.openai_context_overflow(), 400, "context_length_exceeded", "agent failure"),
    (
        "openai",
        s.openai_error(400, "Invalid 'tools[0].function.name'", "invalid_request_error", "invalid_value"),
        400,
        "invalid_request",
        "agent failure",
    ),
    ("openai", s.openai_server_error(500), 502, "model_error", "infra"),
    ("openai", s.openai_rate_limited(0.01), 502, "model_error", "infra"),  # 429 after the window
    ("openai", s.openai_quota_spent(), 502, "engine_auth_failed", "run stop"),
    ("openai", s.openai_bad_key(), 502, "engine_auth_failed", "run stop"),
    ("anthropic", s.anthropic_context_overflow(), 400, "context_length_exceeded", "agent failure"),
    ("anthropic", s.anthropic_overloaded(), 502, "model_error", "infra"),
    ("anthropic", s.anthropic_bad_key(), 502, "engine_auth_failed", "run stop"),
]


@pytest.mark.parametrize(("provider", "answer", "status", "code", "expected"), CASES)
def test_each_upstream_failure_becomes_its_outcome(
    provider, answer, status, code, expected, post, chat, gateway_for
):
    stops: list[str] = []
    with s.StandinServer([answer]) as server:
        model = (
            OpenAIModel("gpt-4o", base_url=server.url + "/v1", retry=NO_WAIT)
            if provider == "openai"
            else AnthropicModel("claude-sonnet-4-6", base_url=server.url, retry=NO_WAIT)
        )
        with gateway_for(model, on_fatal=stops.append) as gateway:
            job = gateway.open_job("j", "n", "solve", 10_000)
            got, body = post(job.socket_path, chat("hi"))
            again, _ = post(job.socket_path, chat("hi"))
            verdict = outcome(got, gateway)
    error = json.loads(body)["error"]
    assert (got, error["code"], verdict) == (status, code, expected)
    assert again == got  # the handler is alive and answers alike
    if expected == "agent failure":  # the agent reads the provider's own words
        assert error["message"] == (answer.body["error"]["message"])
    assert len(stops) == (1 if expected == "run stop" else 0)  # reported once, however often it recurs
    if expected == "run stop":
        assert "refused the engine's key" in gateway.fatal
        assert b"sk-" not in body and answer.body["error"]["message"].encode() not in body  # no key echo


class RaisingModel:
    name = "raising"
    completion_cap = staticmethod(fake_completion_cap)

    def __init__(self) -> None:
        self.calls = 0

    def complete(self, request: ChatRequest) -> ChatResponse:
        self.calls += 1
        raise TypeError("Messages.create() got an unexpected keyword argument 'temperature'")


def test_an_exception_in_a_client_is_a_json_reply_not_a_dead_thread(post, chat, gateway_for):
    model = RaisingModel()
    with gateway_for(model) as gateway:
        job = gateway.open_job("j", "n", "solve", 100)
        replies = [post(job.socket_path, chat("hi")) for _ in range(3)]
        odd, _ = post(job.socket_path, [1, 2])  # valid JSON, not an object
    assert [status for status, _ in replies] == [500, 500, 500] and model.calls == 3
    assert "unexpected keyword argument" in json.loads(replies[0][1])["error"]["message"]
    assert odd == 400


# -- attacks: an agent provoking an `infra` verdict (retried, never counted against it) ------------------


@pytest.mark.parametrize(
    "tools",
    [
        [{"type": "function", "function": {"description": "no name"}}],
        [{"type": "function"}],
        ["not a tool"],
    ],
)
def test_a_malformed_tool_sent_to_anthropic_is_the_agents_400_not_infra(tools, post, chat, gateway_for):
    with s.StandinServer([s.anthropic_text()]) as server:
        model = AnthropicModel("claude-sonnet-4-6", base_url=server.url, retry=NO_WAIT)
        with gateway_for(model) as gateway:
            job = gateway.open_job("j", "n", "solve", 10_000)
            status, body = post(job.socket_path, chat("hi", tools=tools))
            honest, _ = post(job.socket_path, chat("hi"))
            verdict = outcome(status, gateway)
    assert (status, verdict) == (400, "agent failure"), body
    assert server.seen and len(server.seen) == 1 and honest == 200  # only the honest request went upstream


def test_parameters_a_reasoning_model_refuses_are_dropped_not_turned_into_infra(post, chat, gateway_for):
    with s.StandinServer([s.openai_text("fine")]) as server:  # the stand-in 400s temperature/stop/max_tokens
        model = OpenAIModel("o3-mini", base_url=server.url + "/v1", retry=NO_WAIT)
        with gateway_for(model) as gateway:
            job = gateway.open_job("j", "n", "solve", 10_000)
            status, _ = post(job.socket_path, chat("hi", temperature=1.5, stop=["x"], max_tokens=5))
    assert status == 200


def test_an_unsupported_value_in_the_agents_own_fields_is_its_failure(post, chat, gateway_for):
    refusal = s.openai_error(
        400,
        "Unsupported value: 'tools[0].type'",
        "invalid_request_error",
        "unsupported_value",
        "tools[0].type",
    )
    with s.StandinServer([refusal]) as server:
        model = OpenAIModel("gpt-4o", base_url=server.url + "/v1", retry=NO_WAIT)
        with gateway_for(model) as gateway:
            job = gateway.open_job("j", "n", "solve", 10_000)
            status, _ = post(job.socket_path, chat("hi", tools=[{"type": "weird"}]))
            verdict = outcome(status, gateway)
    assert (status, verdict) == (400, "agent failure")
