"""Model clients behind one interface (`ChatModel`), with retries, timeouts and token accounting.

`OpenAICompatible` speaks to any OpenAI-style server (vLLM, SGLang, llama.cpp, Ollama);
`OpenAIModel` and `AnthropicModel` use the official SDKs with the key read from the host environment.
Retries (tenacity): exponential backoff with jitter on 429, 5xx, timeouts and connection errors;
any other 4xx fails at once.
"""

from __future__ import annotations

import itertools
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import anthropic
import openai
from tenacity import Retrying, retry_if_exception, stop_after_attempt, wait_random_exponential

from evolve.errors import EvolveError
from evolve.llm.anthropic_wire import anthropic_payload, anthropic_response
from evolve.llm.pricing import FREE, Price, price_of
from evolve.llm.types import ChatRequest, ChatResponse, Message, ToolCall, Usage, message_to_openai


class ModelError(EvolveError):
    """A model call that failed for good (after retries, or a request the server refuses)."""


@runtime_checkable
class ChatModel(Protocol):
    """Messages in; text, tool calls and token usage out."""

    name: str

    def complete(self, request: ChatRequest) -> ChatResponse: ...


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how patiently transient failures are retried."""

    attempts: int = 6
    initial_s: float = 1.0
    max_s: float = 60.0


def _transient(exc: BaseException) -> bool:
    if isinstance(exc, openai.APIStatusError | anthropic.APIStatusError):
        return exc.status_code == 429 or exc.status_code >= 500
    return isinstance(
        exc,
        openai.APIConnectionError | openai.APITimeoutError | anthropic.APIConnectionError,
    )


def call_with_retries(call: Callable[[], Any], policy: RetryPolicy) -> Any:
    """Run `call`, retrying transient failures; the last failure becomes a `ModelError`."""
    retrying = Retrying(
        retry=retry_if_exception(_transient),
        wait=wait_random_exponential(multiplier=policy.initial_s, max=policy.max_s),
        stop=stop_after_attempt(policy.attempts),
        reraise=True,
    )
    try:
        return retrying(call)
    except (openai.APIError, anthropic.APIError) as exc:
        raise ModelError(f"model call failed: {type(exc).__name__}: {exc}") from exc


def host_key(env_name: str | None) -> str | None:
    """Read an API key from the host environment (never passed on to a sandbox)."""
    if env_name is None:
        return None
    key = os.environ.get(env_name)
    if not key:
        raise ModelError(f"the API key variable {env_name} is not set on the host")
    return key


class OpenAICompatible:
    """Any OpenAI-style chat-completions server; local ones are free and count GPU-seconds."""

    def __init__(
        self,
        base_url: str | None,
        model: str,
        *,
        api_key: str | None = None,
        temperature: float = 0.2,
        max_tokens: int = 1024,
        timeout_s: float = 120.0,
        retry: RetryPolicy = RetryPolicy(),
        price: Price = FREE,
        gpus: int = 0,
    ) -> None:
        self.name = model
        self.base_url = base_url
        self._defaults = (temperature, max_tokens)
        self._retry = retry
        self._price = price
        self._gpus = gpus
        self._client = openai.OpenAI(
            base_url=base_url, api_key=api_key or "no-key", timeout=timeout_s, max_retries=0
        )

    def _payload(self, request: ChatRequest) -> dict[str, Any]:
        temperature, max_tokens = self._defaults
        payload: dict[str, Any] = {
            "model": self.name,
            "messages": [message_to_openai(m) for m in request.messages],
            "temperature": request.temperature if request.temperature is not None else temperature,
            "max_tokens": min(request.max_tokens or max_tokens, max_tokens),
        }
        if request.tools:
            payload["tools"] = list(request.tools)
        if request.tool_choice is not None:
            payload["tool_choice"] = request.tool_choice
        if request.stop:
            payload["stop"] = list(request.stop)
        return payload

    def complete(self, request: ChatRequest) -> ChatResponse:
        payload = self._payload(request)
        started = time.monotonic()
        raw = call_with_retries(lambda: self._client.chat.completions.create(**payload), self._retry)
        elapsed = time.monotonic() - started
        choice = raw.choices[0]
        calls = tuple(
            ToolCall(id=c.id, name=c.function.name, arguments=c.function.arguments or "{}")
            for c in choice.message.tool_calls or ()
        )
        prompt = raw.usage.prompt_tokens if raw.usage else 0
        completion = raw.usage.completion_tokens if raw.usage else 0
        return ChatResponse(
            message=Message(role="assistant", content=choice.message.content, tool_calls=calls),
            finish_reason=choice.finish_reason or "stop",
            model=self.name,
            usage=Usage(
                prompt_tokens=prompt,
                completion_tokens=completion,
                cost_usd=self._price.cost(prompt, completion),
                gpu_seconds=elapsed * self._gpus,
            ),
        )


class OpenAIModel(OpenAICompatible):
    """The hosted OpenAI API; the key comes from the host variable `api_key_env`."""

    def __init__(self, model: str, *, api_key_env: str = "OPENAI_API_KEY", **kwargs: Any) -> None:
        super().__init__(None, model, api_key=host_key(api_key_env), price=price_of(model), **kwargs)


class AnthropicModel:
    """The hosted Anthropic API; OpenAI-style tools and tool calls are translated both ways."""

    def __init__(
        self,
        model: str,
        *,
        api_key_env: str = "ANTHROPIC_API_KEY",
        temperature: float = 0.2,
        max_tokens: int = 1024,
        timeout_s: float = 120.0,
        retry: RetryPolicy = RetryPolicy(),
    ) -> None:
        self.name = model
        self._defaults = (temperature, max_tokens)
        self._retry = retry
        self._price = price_of(model)
        self._client = anthropic.Anthropic(api_key=host_key(api_key_env), timeout=timeout_s, max_retries=0)

    def complete(self, request: ChatRequest) -> ChatResponse:
        payload = anthropic_payload(request, self.name, *self._defaults)
        raw = call_with_retries(lambda: self._client.messages.create(**payload), self._retry)
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
