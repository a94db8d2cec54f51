"""Model clients behind one interface (`ChatModel`), with retries, timeouts and token accounting.

`OpenAICompatible` speaks to any OpenAI-style server (vLLM, SGLang, llama.cpp, Ollama);
`OpenAIModel` and `AnthropicModel` use the official SDKs with the key read from the host environment.
Request arguments come from the capability table (evolve/models/capabilities.py) through pure functions
(`openai_arguments`, `anthropic_payload`), so `evolve models check` shows exactly what is sent. The
SDKs' own retries are off: `Retrier` (evolve/llm/retries.py) is the one retry layer.
"""

from __future__ import annotations

import itertools
import os
import time
import warnings
from collections.abc import Callable, Sequence
from typing import Any, Protocol, runtime_checkable

from evolve.llm.anthropic_wire import anthropic_payload, anthropic_response
from evolve.llm.failures import ModelError, untranslatable
from evolve.llm.retries import Retrier, RetryPolicy
from evolve.llm.types import ChatRequest, ChatResponse, Message, ToolCall, Usage, message_to_openai
from evolve.models.capabilities import Capabilities, capabilities, completion_cap
from evolve.models.pricing import FREE, Price, known_price

__all__ = [
    "AnthropicModel",
    "ChatModel",
    "ModelError",
    "OpenAICompatible",
    "OpenAIModel",
    "RetryPolicy",
    "RoundRobin",
    "host_key",
    "hosted_price",
    "openai_arguments",
]


DEFAULT_RETRY = RetryPolicy()


@runtime_checkable
class ChatModel(Protocol):
    """Messages in; text, tool calls and token usage out."""

    name: str

    def complete(self, request: ChatRequest) -> ChatResponse: ...

    def completion_cap(self, request: ChatRequest) -> int:
        """At most how many completion tokens `complete(request)` asks the model for (what the
        gateway reserves from the job's budget)."""
        ...


def host_key(env_name: str | None) -> str | None:
    """Read an API key from the host environment (never passed on to a sandbox)."""
    if env_name is None:
        return None
    key = os.environ.get(env_name)
    if not key:
        raise ModelError(f"the API key variable {env_name} is not set on the host", "auth")
    return key


def hosted_price(model: str, configured: Price | None = None) -> Price:
    """The configured price, else the table's; an unknown hosted model warns and counts as free
    (a run with a dollar budget refuses it at config time, see `evolve.config`)."""
    price = configured or known_price(model)
    if price is None:
        warnings.warn(
            f"no price known for hosted model {model!r}: its spend counts as $0; give "
            "price_input_per_mtok and price_output_per_mtok in its [models.<role>]",
            stacklevel=2,
        )
        return FREE
    return price


def openai_arguments(
    request: ChatRequest, model: str, caps: Capabilities, temperature: float, max_tokens: int
) -> dict[str, Any]:
    """The `chat.completions.create` keyword arguments for `request` under `caps`."""
    cap = completion_cap(caps, max_tokens, request.max_tokens, request.ceiling)
    payload: dict[str, Any] = {
        "model": model,
        "messages": [message_to_openai(m) for m in request.messages],
        caps.token_cap_key: cap,
    }
    if caps.sampling:
        payload["temperature"] = request.temperature if request.temperature is not None else temperature
    if request.tools:
        payload["tools"] = list(request.tools)
        if request.tool_choice is not None:
            payload["tool_choice"] = request.tool_choice
    if request.stop and caps.stop:
        payload["stop"] = list(request.stop)
    if request.seed is not None and caps.seed:
        payload["seed"] = request.seed
    if request.response_format is not None and caps.structured:
        payload["response_format"] = request.response_format
    return payload


def _openai_response(raw: Any, model: str, price: Price, gpu_seconds: float) -> ChatResponse:
    if not raw.choices:
        raise ModelError(f"{model} answered without a choice", "unavailable")
    choice = raw.choices[0]
    calls = tuple(
        ToolCall(id=c.id, name=c.function.name, arguments=c.function.arguments or "{}")
        for c in choice.message.tool_calls or ()
        if getattr(c, "function", None) is not None
    )
    content, finish = choice.message.content, choice.finish_reason or "stop"
    refusal = getattr(choice.message, "refusal", None)
    if refusal:  # a refusal is an answer the agent can read, marked as OpenAI marks filtered output
        content, finish = refusal, "content_filter"
    usage = raw.usage
    prompt = usage.prompt_tokens if usage else 0
    completion = usage.completion_tokens if usage else 0
    details = getattr(usage, "prompt_tokens_details", None) if usage else None
    cached = (getattr(details, "cached_tokens", None) or 0) if details else 0
    return ChatResponse(
        message=Message(role="assistant", content=content, tool_calls=calls),
        finish_reason=finish,
        model=model,
        usage=Usage(
            prompt_tokens=prompt,
            completion_tokens=completion,
            cached_prompt_tokens=cached,
            cost_usd=price.cost(prompt, completion, cached),
            gpu_seconds=gpu_seconds,
        ),
    )


def _translated(build: Callable[[ChatRequest], dict[str, Any]], request: ChatRequest) -> dict[str, Any]:
    """The SDK arguments; a request that cannot be translated (a tool without a name, ...) is the agent's
    400, not an engine failure an agent could provoke to have its failures counted as `infra`."""
    try:
        return build(request)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise untranslatable(exc) from exc


class OpenAICompatible:
    """Any OpenAI-style chat-completions server; local ones are free and count GPU-seconds."""

    def __init__(
        self,
        base_url: str | None,
        model: str,
        *,
        api_key: str | None = None,
        temperature: float = 0.2,
        max_tokens: int | None = None,
        timeout_s: float | None = None,
        retry: RetryPolicy = DEFAULT_RETRY,
        price: Price = FREE,
        gpus: int = 0,
        provider: str = "openai-compatible",
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.name = model
        self.base_url = base_url
        self.caps = capabilities(provider, model)
        self.temperature = temperature
        self.max_tokens = max_tokens or self.caps.default_max_tokens
        self.timeout_s = timeout_s or self.caps.default_timeout_s
        self._retrier = Retrier(retry, sleep=sleep)
        self._price = price
        self._gpus = gpus
        import openai  # the SDK loads with the first client, not with every `evolve` command

        self._client = openai.OpenAI(
            base_url=base_url, api_key=api_key or "no-key", timeout=self.timeout_s, max_retries=0
        )

    def arguments(self, request: ChatRequest) -> dict[str, Any]:
        return openai_arguments(request, self.name, self.caps, self.temperature, self.max_tokens)

    def completion_cap(self, request: ChatRequest) -> int:
        return completion_cap(self.caps, self.max_tokens, request.max_tokens, request.ceiling)

    def complete(self, request: ChatRequest) -> ChatResponse:
        payload = _translated(self.arguments, request)
        started = time.monotonic()
        raw = self._retrier.call(lambda: self._client.chat.completions.create(**payload))
        return _openai_response(raw, self.name, self._price, (time.monotonic() - started) * self._gpus)


class OpenAIModel(OpenAICompatible):
    """The hosted OpenAI API; the key comes from the host variable `api_key_env`."""

    def __init__(
        self,
        model: str,
        *,
        api_key_env: str = "OPENAI_API_KEY",
        price: Price | None = None,
        base_url: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(
            base_url,
            model,
            api_key=host_key(api_key_env),
            price=hosted_price(model, price),
            provider="openai",
            **kwargs,
        )


class AnthropicModel:
    """The hosted Anthropic API; OpenAI-style tools and tool calls are translated both ways."""

    def __init__(
        self,
        model: str,
        *,
        api_key_env: str = "ANTHROPIC_API_KEY",
        temperature: float = 0.2,
        max_tokens: int | None = None,
        timeout_s: float | None = None,
        retry: RetryPolicy = DEFAULT_RETRY,
        price: Price | None = None,
        base_url: str | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.name = model
        self.base_url = base_url
        self.caps = capabilities("anthropic", model)
        self.temperature = temperature  # not sent: the installed SDK's messages.create takes none
        self.max_tokens = max_tokens or self.caps.default_max_tokens
        self.timeout_s = timeout_s or self.caps.default_timeout_s
        self._retrier = Retrier(retry, sleep=sleep)
        self._price = hosted_price(model, price)
        import anthropic  # the SDK loads with the first client, not with every `evolve` command

        self._client = anthropic.Anthropic(
            api_key=host_key(api_key_env), base_url=base_url, timeout=self.timeout_s, max_retries=0
        )

    def arguments(self, request: ChatRequest) -> dict[str, Any]:
        return anthropic_payload(request, self.name, self.completion_cap(request))

    def completion_cap(self, request: ChatRequest) -> int:
        return completion_cap(self.caps, self.max_tokens, request.max_tokens, request.ceiling)

    def complete(self, request: ChatRequest) -> ChatResponse:
        payload = _translated(self.arguments, request)
        raw = self._retrier.call(lambda: self._client.messages.create(**payload))
        return anthropic_response(raw, self.name, self._price)


class RoundRobin:
    """Spreads requests over replicas of one model (e.g. several vLLM servers)."""

    def __init__(self, replicas: Sequence[ChatModel]) -> None:
        if not replicas:
            raise ValueError("RoundRobin needs at least one replica")
        self.name = replicas[0].name
        self._replicas = tuple(replicas)
        self._turn = itertools.count()

    def complete(self, request: ChatRequest) -> ChatResponse:
        # next() on itertools.count is atomic under the GIL, so threads share turns safely.
        return self._replicas[next(self._turn) % len(self._replicas)].complete(request)

    def completion_cap(self, request: ChatRequest) -> int:
        return self._replicas[0].completion_cap(request)  # replicas of one model share its cap
