"""What each role would send, without sending it: `evolve models check CONFIG` (no key, GPU or server
needed). The arguments come from the same functions the clients call, so the dry run is the request."""

from __future__ import annotations

import os
from typing import Any

from evolve.config import ModelConfig, ModelsConfig
from evolve.llm.anthropic_wire import anthropic_payload
from evolve.llm.client import openai_arguments
from evolve.llm.types import ROLES, ChatRequest, Message
from evolve.models.capabilities import capabilities, worst_case_s
from evolve.models.pricing import PRICES_AS_OF, known_price

SAMPLE = ChatRequest(
    messages=(
        Message(role="system", content="You are a coding agent."),
        Message(role="user", content="Say ok."),
    ),
    tools=(
        {
            "type": "function",
            "function": {
                "name": "bash",
                "description": "Run a shell command.",
                "parameters": {"type": "object", "properties": {"cmd": {"type": "string"}}},
            },
        },
    ),
    tool_choice="auto",
    max_tokens=1024,
)
"""A typical agent request: a system prompt, a user turn, one tool, the agent's own token cap."""

_KEY_ENV = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}


def _key_env(config: ModelConfig) -> str | None:
    return config.api_key_env or _KEY_ENV.get(config.provider)


def _call(config: ModelConfig) -> tuple[str, dict[str, Any] | None]:
    """(what is called, its keyword arguments) for the sample request."""
    caps = capabilities(config.provider, config.model)
    max_tokens = config.max_tokens or caps.default_max_tokens
    if config.provider == "anthropic":
        return "anthropic.Anthropic().messages.create", anthropic_payload(SAMPLE, config.model, max_tokens)
    if config.provider in ("scripted", "replay"):
        return f"{config.provider} (no model server)", None
    name = config.served_model_name or config.model
    arguments = openai_arguments(SAMPLE, name, caps, config.temperature, max_tokens)
    return "openai.OpenAI().chat.completions.create", arguments


def _endpoint(config: ModelConfig) -> str:
    if config.provider == "openai":
        return config.base_url or "https://api.openai.com/v1"
    if config.provider == "anthropic":
        return config.base_url or "https://api.anthropic.com"
    if config.provider == "openai-compatible":
        return ", ".join(config.replica_urls or (config.base_url or "(base_url missing)",))
    return f"a local {config.provider} server started by the run"


def _missing(config: ModelConfig) -> list[str]:
    missing = []
    env = _key_env(config)
    if env is not None and not os.environ.get(env):
        missing.append(f"the API key variable {env} is not set on this host")
    if config.provider == "openai-compatible" and not (config.base_url or config.replica_urls):
        missing.append("base_url (or replica_urls)")
    if (
        config.provider in ("openai", "anthropic")
        and config.price() is None
        and known_price(config.model) is None
    ):
        missing.append(
            f"a price for {config.model!r} (not in the table of {PRICES_AS_OF}): spend would count as $0"
        )
    return missing


def role_plan(role: str, config: ModelConfig) -> dict[str, Any]:
    """Everything `evolve models check` prints for one role."""
    from evolve.llm.stack import vllm_server

    caps = capabilities(config.provider, config.model)
    timeout = config.timeout_s or caps.default_timeout_s
    call, arguments = _call(config)
    price = config.price() or known_price(config.model)
    plan: dict[str, Any] = {
        "role": role,
        "provider": config.provider,
        "model": config.model,
        "family": caps.family,
        "endpoint": _endpoint(config),
        "call": call,
        "arguments": arguments,
        "api_key_env": _key_env(config),
        "timeout_s": timeout,
        "retry_window_s": config.retry_window_min * 60,
        "longest_call_s": worst_case_s(config.retry_window_min * 60, timeout),
        "price_per_mtok": None
        if price is None
        else {
            "input": price.input_per_mtok,
            "output": price.output_per_mtok,
            "cached_input": price.cached_input_per_mtok,
        },
        "missing": _missing(config),
    }
    if config.provider == "vllm":
        server = vllm_server(config)
        plan["servers"] = [
            {"CUDA_VISIBLE_DEVICES": ",".join(map(str, gpus)), "command": server.command(8000 + i)}
            for i, gpus in enumerate(server.replica_gpus)
        ]
    return plan


def models_plan(models: ModelsConfig) -> list[dict[str, Any]]:
    """The plan of every role, vLLM GPUs assigned as the run would assign them."""
    from evolve.llm.stack import gpu_plan

    planned = gpu_plan(models)
    return [role_plan(role, planned[role]) for role in ROLES]
