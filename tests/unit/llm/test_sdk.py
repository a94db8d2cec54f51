"""The clients against the installed SDKs: every argument they pass is one the SDK method takes, per
provider and model family, and the installed versions are inside the tested pins (an SDK upgrade
fails here, not in a run)."""

from __future__ import annotations

import inspect
import tomllib
from importlib.metadata import version
from pathlib import Path

import anthropic
import pytest
from packaging.requirements import Requirement

from evolve.llm.anthropic_wire import anthropic_payload
from evolve.llm.client import openai_arguments
from evolve.llm.types import ChatRequest, Message, ToolCall
from evolve.models.capabilities import REASONING_MAX_TOKENS, capabilities

ROOT = Path(__file__).resolve().parents[3]
TOOLS = (
    {
        "type": "function",
        "function": {"name": "bash", "description": "run", "parameters": {"type": "object"}},
    },
)


def _request(**extra: object) -> ChatRequest:
    return ChatRequest(
        messages=(
            Message(role="system", content="be brief"),
            Message(role="user", content="list files"),
            Message(
                role="assistant",
                content="",
                tool_calls=(ToolCall(id="t1", name="bash", arguments='{"c": 1}'),),
            ),
            Message(role="tool", tool_call_id="t1", content="a.py"),
            Message(role="assistant", content="   "),
            Message(role="user", content="and now?"),
        ),
        **{
            "tools": TOOLS,
            "tool_choice": "required",
            "temperature": 0.7,
            "max_tokens": 512,
            "stop": ("```",),
            **extra,
        },
    )


def _accepted(method) -> set[str]:
    return {name for name in inspect.signature(method).parameters if name != "self"}


OPENAI_MODELS = [
    "gpt-4o",
    "gpt-4o-mini-2024-07-18",
    "gpt-4.1",
    "o1",
    "o1-2024-12-17",
    "o3-mini",
    "o3-pro",
    "o4-mini",
    "gpt-5-mini",
    "gpt-5",
    "gpt-5-chat-latest",
]


@pytest.mark.parametrize("provider", ["openai", "openai-compatible", "vllm", "embedded"])
@pytest.mark.parametrize("model", OPENAI_MODELS + ["qwen2.5-coder-0.5b-instruct"])
def test_every_openai_argument_is_in_the_installed_sdk_signature(provider, model):
    from openai.resources.chat.completions import Completions

    arguments = openai_arguments(_request(), model, capabilities(provider, model), 0.2, 1024)
    assert set(arguments) <= _accepted(Completions.create), set(arguments) - _accepted(Completions.create)


@pytest.mark.parametrize(
    "model", ["o1", "o1-2024-12-17", "o3-mini-2025-01-31", "o3-pro", "o4-mini", "gpt-5-mini"]
)
def test_openai_reasoning_models_get_no_sampling_arguments_and_a_larger_cap(model):
    arguments = openai_arguments(_request(), model, capabilities("openai", model), 0.2, REASONING_MAX_TOKENS)
    assert "temperature" not in arguments and "stop" not in arguments and "max_tokens" not in arguments
    # the agent's 512 would starve reasoning
    assert arguments["max_completion_tokens"] == REASONING_MAX_TOKENS
    assert capabilities("openai", model).default_max_tokens == REASONING_MAX_TOKENS


def test_openai_chat_models_keep_sampling_and_local_servers_get_max_tokens():
    hosted = openai_arguments(_request(), "gpt-4o", capabilities("openai", "gpt-4o"), 0.2, 1024)
    assert (
        hosted["temperature"] == 0.7 and hosted["max_completion_tokens"] == 512 and hosted["stop"] == ["```"]
    )
    local = openai_arguments(_request(), "qwen", capabilities("vllm", "qwen"), 0.2, 1024)
    assert local["max_tokens"] == 512 and "max_completion_tokens" not in local
    assert capabilities("openai", "gpt-5-chat-latest").family == "openai-chat"  # -chat takes sampling


@pytest.mark.parametrize("model", ["claude-3-5-sonnet-20241022", "claude-sonnet-4-5", "claude-opus-4-1"])
@pytest.mark.parametrize(
    "choice", [None, "auto", "required", "none", {"type": "function", "function": {"name": "bash"}}]
)
def test_every_anthropic_argument_is_in_the_installed_sdk_signature(model, choice):
    from anthropic.resources.messages import Messages

    payload = anthropic_payload(_request().model_copy(update={"tool_choice": choice}), model, 4096)
    assert set(payload) <= _accepted(Messages.create), set(payload) - _accepted(Messages.create)


def test_anthropic_turns_are_never_empty_and_tool_choice_is_mapped():
    payload = anthropic_payload(_request(), "claude-sonnet-4-5", 4096)
    assert payload["tool_choice"] == {"type": "any"}
    for turn in payload["messages"]:
        assert turn["content"], turn
        assert all(block.get("text", "x").strip() for block in turn["content"])
    assert [turn["role"] for turn in payload["messages"]] == ["user", "assistant", "user"]
    assert payload["messages"][2]["content"][-1] == {"type": "text", "text": "and now?"}
    named = anthropic_payload(
        _request(tool_choice={"type": "function", "function": {"name": "bash"}}), "c", 9
    )
    assert named["tool_choice"] == {"type": "tool", "name": "bash"}


@pytest.mark.parametrize("package", ["openai", "anthropic"])
def test_the_installed_sdks_are_inside_the_tested_pins(package):
    dependencies = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    (pin,) = [Requirement(d) for d in dependencies if Requirement(d).name == package]
    assert pin.specifier.contains(version(package)), f"{package} {version(package)} is outside {pin}"
    assert pin.specifier.contains("99.0") is False, f"{package} has no upper bound: {pin}"


def test_anthropic_sdk_error_for_529_is_retryable_and_classified_as_unavailable():
    import httpx2  # the transport the installed SDKs use

    from evolve.llm.failures import classify, retryable

    response = httpx2.Response(529, request=httpx2.Request("POST", "http://x/v1/messages"))
    error = anthropic.InternalServerError("Overloaded", response=response, body=None)
    assert retryable(error) and classify(error) == "unavailable"
