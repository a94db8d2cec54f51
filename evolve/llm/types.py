"""Typed chat values shared by clients, the gateway and the recorder (OpenAI schema in and out)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer

Role = Literal["diagnose", "modify", "solve"]
ROLES: tuple[Role, ...] = ("diagnose", "modify", "solve")


class _Value(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ToolCall(_Value):
    """One function call the model asks for; `arguments` is the JSON text the model wrote."""

    id: str
    name: str
    arguments: str = "{}"


class Message(_Value):
    """One chat message in the OpenAI shape (system, user, assistant or tool)."""

    role: Literal["system", "user", "assistant", "tool"]
    content: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    name: str | None = None


class ChatRequest(_Value):
    """What a caller asks: messages, optional tools (OpenAI function schemas), sampling limits."""

    messages: tuple[Message, ...]
    tools: tuple[dict[str, Any], ...] = ()
    tool_choice: str | dict[str, Any] | None = None
    temperature: float | None = None
    max_tokens: int | None = Field(None, gt=0)
    stop: tuple[str, ...] = ()
    ceiling: int | None = Field(None, gt=0, exclude=True)
    """The engine's bound on completion tokens (the gateway's grant from the job's budget): every client
    honours it, whatever it does with `max_tokens`. Never read from an agent's body, and left out of
    dumps, so records and `request_digest` stay those of the request as the agent sent it."""
    seed: int | None = Field(None, ge=0, exclude=True)
    """The engine's sampling seed for this request (the gateway derives it from the run seed, the job
    and the request number), sent to providers that accept one. Like `ceiling`: never read from an
    agent's body, left out of dumps, so replay matches recordings made with or without seeds."""
    response_format: dict[str, Any] | None = None
    """OpenAI's `response_format` (`{"type": "json_schema", "json_schema": {"name", "schema"}}`, or
    `json_object`): the reply constrained to it where the provider can (`Capabilities.structured`; the
    embedded server compiles the schema to a llama.cpp grammar). Dumped only when set, so the digests of
    requests recorded before it existed stay the same."""

    @model_serializer(mode="wrap")
    def _dump(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        if self.response_format is None:
            data.pop("response_format", None)
        return data


class Usage(_Value):
    """Tokens of one exchange, its dollar cost (hosted APIs) and GPU-seconds (local servers)."""

    prompt_tokens: int = 0
    """All input tokens, cached ones included."""
    completion_tokens: int = 0
    cost_usd: float = 0.0
    gpu_seconds: float = 0.0
    cached_prompt_tokens: int = 0
    """Of `prompt_tokens`, those read from the provider's prompt cache (priced lower)."""
    cache_write_tokens: int = 0
    """Of `prompt_tokens`, those written to Anthropic's prompt cache (priced higher)."""

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
            cost_usd=self.cost_usd + other.cost_usd,
            gpu_seconds=self.gpu_seconds + other.gpu_seconds,
            cached_prompt_tokens=self.cached_prompt_tokens + other.cached_prompt_tokens,
            cache_write_tokens=self.cache_write_tokens + other.cache_write_tokens,
        )


class ChatResponse(_Value):
    """The model's answer: one assistant message, why it stopped, and what it cost."""

    message: Message
    finish_reason: str = "stop"
    model: str
    usage: Usage = Usage()


def message_to_openai(message: Message) -> dict[str, Any]:
    """The OpenAI wire form of one message."""
    out: dict[str, Any] = {"role": message.role, "content": message.content}
    if message.tool_calls:
        out["tool_calls"] = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
            for c in message.tool_calls
        ]
    if message.tool_call_id is not None:
        out["tool_call_id"] = message.tool_call_id
    if message.name is not None:
        out["name"] = message.name
    return out


def response_to_openai(response: ChatResponse, response_id: str, created: int) -> dict[str, Any]:
    """The OpenAI chat-completions response body of one answer."""
    return {
        "id": response_id,
        "object": "chat.completion",
        "created": created,
        "model": response.model,
        "choices": [
            {
                "index": 0,
                "message": message_to_openai(response.message),
                "finish_reason": response.finish_reason,
            }
        ],
        "usage": {
            "prompt_tokens": response.usage.prompt_tokens,
            "completion_tokens": response.usage.completion_tokens,
            "total_tokens": response.usage.total_tokens,
        },
    }
