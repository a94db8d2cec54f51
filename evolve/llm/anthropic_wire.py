"""Translation between the OpenAI chat schema (what the gateway speaks) and Anthropic's Messages API.

Anthropic refuses empty text blocks, a conversation without a user/assistant turn, and a final
assistant turn ending in whitespace; it names tool choice differently and counts cached input
apart from `input_tokens`. All of that is handled here, so the gateway's callers never see it.
"""

from __future__ import annotations

import json
from typing import Any

from evolve.llm.failures import ModelError
from evolve.llm.types import ChatRequest, ChatResponse, Message, ToolCall, Usage
from evolve.models.pricing import Price

# `refusal`: the model declined (reported as OpenAI does, `content_filter`);
# `model_context_window_exceeded`: the answer was cut by the context window (`length`).
FINISH = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "pause_turn": "stop",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "tool_use": "tool_calls",
    "refusal": "content_filter",
}


def _tool(schema: dict[str, Any]) -> dict[str, Any]:
    function = schema.get("function", schema)
    return {
        "name": function["name"],
        "description": function.get("description", ""),
        "input_schema": function.get("parameters") or {"type": "object", "properties": {}},
    }


def tool_choice(choice: str | dict[str, Any] | None) -> dict[str, Any] | None:
    """OpenAI's `tool_choice` in Anthropic's terms (auto, required -> any, none, a named function -> tool)."""
    if choice is None:
        return None
    if isinstance(choice, str):
        mapped = {"auto": "auto", "required": "any", "any": "any", "none": "none"}.get(choice)
        if mapped is None:
            raise ModelError(f"unknown tool_choice {choice!r}", "request", 400)
        return {"type": mapped}
    name = (choice.get("function") or {}).get("name") or choice.get("name")
    if not name:
        raise ModelError(f"tool_choice names no function: {choice!r}", "request", 400)
    return {"type": "tool", "name": name}


def _blocks(message: Message) -> list[dict[str, Any]]:
    if message.role == "tool":
        result: dict[str, Any] = {"type": "tool_result", "tool_use_id": message.tool_call_id or ""}
        if message.content:
            result["content"] = message.content
        return [result]
    blocks: list[dict[str, Any]] = []
    if message.content and message.content.strip():
        blocks.append({"type": "text", "text": message.content})
    for call in message.tool_calls:
        try:
            arguments = json.loads(call.arguments or "{}")
        except json.JSONDecodeError:
            arguments = {"_raw": call.arguments}
        if not isinstance(arguments, dict):
            arguments = {"_raw": call.arguments}
        blocks.append({"type": "tool_use", "id": call.id, "name": call.name, "input": arguments})
    return blocks


def _turns(request: ChatRequest) -> list[dict[str, Any]]:
    """User/assistant turns: tool results as user turns, same-role neighbours merged, empty ones dropped."""
    turns: list[dict[str, Any]] = []
    for message in request.messages:
        if message.role == "system":
            continue
        role = "assistant" if message.role == "assistant" else "user"
        blocks = _blocks(message)
        if not blocks:
            continue
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"].extend(blocks)
        else:
            turns.append({"role": role, "content": blocks})
    if not turns:
        raise ModelError("the request has no non-empty user or assistant message", "request", 400)
    last = turns[-1]
    # a prefill may not end in whitespace
    if last["role"] == "assistant" and last["content"][-1]["type"] == "text":
        last["content"][-1] = {"type": "text", "text": last["content"][-1]["text"].rstrip()}
    return turns


def anthropic_payload(request: ChatRequest, model: str, max_tokens: int) -> dict[str, Any]:
    """The `messages.create` keyword arguments for an OpenAI-style request."""
    system = "\n\n".join(m.content for m in request.messages if m.role == "system" and m.content)
    payload: dict[str, Any] = {
        "model": model,
        "messages": _turns(request),
        "max_tokens": min(request.max_tokens or max_tokens, max_tokens),
    }
    if system.strip():
        payload["system"] = system
    if request.tools:
        payload["tools"] = [_tool(t) for t in request.tools]
        choice = tool_choice(request.tool_choice)
        if choice is not None:
            payload["tool_choice"] = choice
    if request.stop:
        payload["stop_sequences"] = list(request.stop)
    return payload


def anthropic_usage(raw_usage: Any, price: Price) -> Usage:
    """Usage with cached input counted: Anthropic's `input_tokens` excludes cache reads and writes."""
    fresh = raw_usage.input_tokens or 0
    read = getattr(raw_usage, "cache_read_input_tokens", None) or 0
    written = getattr(raw_usage, "cache_creation_input_tokens", None) or 0
    prompt, completion = fresh + read + written, raw_usage.output_tokens or 0
    return Usage(
        prompt_tokens=prompt,
        completion_tokens=completion,
        cached_prompt_tokens=read,
        cache_write_tokens=written,
        cost_usd=price.cost(prompt, completion, read, written),
    )


def anthropic_response(raw: Any, model: str, price: Price) -> ChatResponse:
    """A `ChatResponse` from an Anthropic `Message` (text joined, tool_use blocks as tool calls)."""
    text = "".join(block.text for block in raw.content if block.type == "text")
    calls = tuple(
        ToolCall(id=block.id, name=block.name, arguments=json.dumps(block.input, sort_keys=True))
        for block in raw.content
        if block.type == "tool_use"
    )
    return ChatResponse(
        message=Message(role="assistant", content=text or None, tool_calls=calls),
        finish_reason=FINISH.get(raw.stop_reason or "end_turn", "stop"),
        model=model,
        usage=anthropic_usage(raw.usage, price),
    )
