"""What each provider and model family accepts: the one table request arguments are built from.

OpenAI's reasoning models (o1, o3, o4-mini, gpt-5 and later except their -chat variants) take
`max_completion_tokens` (reasoning tokens count against it) and refuse `temperature`, `top_p` and
`stop` with a 400. The hosted OpenAI API takes `max_completion_tokens` for every model; OpenAI-style
local servers (vLLM, llama.cpp) get the older `max_tokens`. Anthropic's installed SDK takes no
sampling temperature (its `messages.create` signature has none), so none is sent.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

REASONING_MAX_TOKENS = 25_000
"""OpenAI's reasoning guide asks to reserve at least 25,000 tokens for reasoning and the answer."""
REASONING_TIMEOUT_S = 600.0
"""A reasoning model may think for minutes before its first token."""

AGENT_WAIT_S = 1800.0
"""How long an agent is taken to wait for one gateway answer (the bundled seed's model client waits a little
longer). One gateway call (`worst_case_s`) must end before it, or the agent
would re-send a request the gateway is still retrying, and it would be paid twice."""

_OPENAI_REASONING = re.compile(r"^(o1|o3|o4)(-|$)|^gpt-([5-9]|[1-9][0-9])(?!.*-chat)")


@dataclass(frozen=True)
class Capabilities:
    """The arguments one provider/model pair takes."""

    provider: str
    family: str
    token_cap_key: str
    """`max_tokens` or `max_completion_tokens`."""
    sampling: bool
    """Whether `temperature` is accepted."""
    stop: bool
    """Whether stop sequences are accepted."""
    default_max_tokens: int
    default_timeout_s: float
    caller_cap: bool
    """Whether a caller's smaller `max_tokens` is honoured. Not for reasoning models: an agent's
    1024 would be spent on hidden reasoning and leave no answer."""
    seed: bool = False
    """Whether a per-request sampling `seed` is accepted (OpenAI chat models, vLLM, llama.cpp)."""
    structured: bool = False
    """Whether a `response_format` JSON schema constrains the reply (OpenAI, vLLM, the embedded server)."""


def is_reasoning(model: str) -> bool:
    """An OpenAI reasoning model (by name; dated snapshots included)."""
    return bool(_OPENAI_REASONING.search(model.lower()))


EMBEDDED_TIMEOUT_S = 600.0


def capabilities(provider: str, model: str) -> Capabilities:
    """The row of the table for `provider` (a `[models.<role>] provider`) and `model`."""
    if provider == "anthropic":
        return Capabilities(
            provider,
            "claude",
            "max_tokens",
            sampling=False,
            stop=True,
            default_max_tokens=4096,
            default_timeout_s=300.0,
            caller_cap=True,
        )
    if provider == "openai" and is_reasoning(model):
        return Capabilities(
            provider,
            "openai-reasoning",
            "max_completion_tokens",
            sampling=False,
            stop=False,
            default_max_tokens=REASONING_MAX_TOKENS,
            default_timeout_s=REASONING_TIMEOUT_S,
            caller_cap=False,
            structured=True,
        )
    if provider == "openai":
        return Capabilities(
            provider,
            "openai-chat",
            "max_completion_tokens",
            sampling=True,
            stop=True,
            default_max_tokens=4096,
            default_timeout_s=120.0,
            caller_cap=True,
            seed=True,
            structured=True,
        )
    # The embedded server answers one request at a time on a CPU, and a request's timeout includes its
    # wait behind another job's: 120 s made queued requests time out and be generated twice.
    timeout = EMBEDDED_TIMEOUT_S if provider == "embedded" else 120.0
    return Capabilities(
        provider,
        "openai-compatible",
        "max_tokens",
        sampling=True,
        stop=True,
        default_max_tokens=1024,
        default_timeout_s=timeout,
        caller_cap=True,
        seed=True,
        structured=True,
    )


def completion_cap(caps: Capabilities, configured: int, requested: int | None, ceiling: int | None) -> int:
    """The completion cap a model is sent: the caller's smaller `requested` where the family honours it,
    else the `configured` one; never above the engine's `ceiling` (the job's budget left)."""
    cap = min(requested or configured, configured) if caps.caller_cap else configured
    return cap if ceiling is None else min(cap, ceiling)


def worst_case_s(window_s: float, timeout_s: float) -> float:
    """The longest one gateway call can take: no attempt starts after the retry window, and the last
    one runs at most its timeout."""
    return window_s + timeout_s
