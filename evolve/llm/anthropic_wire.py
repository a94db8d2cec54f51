"""Translation between the OpenAI chat schema (what the gateway speaks) and Anthropic's Messages API."""

from __future__ import annotations

import json
from typing import Any

from evolve.llm.pricing import Price
from evolve.llm.types import ChatRequest, ChatResponse, Message, ToolCall, Usage

_FINISH = {"end_turn": "stop", "stop_sequence": "stop", "max_tokens": "length", "tool_use": "tool_calls"}


def _tool(schema: dict[str, Any]) -> dict[str, Any]:
    function = schema.get("function", schema)
    return {
        "name": function["name"],
        "description": function.get("description", ""),
        "input_schema": function.get("parameters") or {"type": "object", "properties": {}},
    }


def _blocks(message: Message) -> list[dict[str, Any]]:
    if message.role == "tool":
        return [
            {
                "type": "tool_result",
                "tool_use_id": message.tool_call_id or "",
                "content": message.content or "",
            }
        ]
    blocks: list[dict[str, Any]] = []
    if message.content:
        blocks.append({"type": "text", "text": message.content})
    for call in message.tool_calls:
        try:
            arguments = json.loads(call.arguments or "{}")
        except json.JSONDecodeError:
            arguments = {"_raw": call.arguments}
        blocks.append({"type": "tool_use", "id": call.id, "name": call.name, "input": arguments})
    return blocks


def anthropic_payload(
    request: ChatRequest, model: str, temperature: float, max_tokens: int
) -> dict[str, Any]:
    """The `messages.create` arguments for an OpenAI-style request (system text lifted out,
    tool results sent as user turns, consecutive same-role turns merged)."""
    system = "\n\n".join(m.content or "" for m in request.messages if m.role == "system")
    turns: list[dict[str, Any]] = []
    for message in request.messages:
        if message.role == "system":
            continue
        role = "assistant" if message.role == "assistant" else "user"
        blocks = _blocks(message)
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"].extend(blocks)
        else:
            turns.append({"role": role, "content": blocks})
    payload: dict[str, Any] = {
        "model": model,
        "messages": turns,
        "max_tokens": min(request.max_tokens or max_tokens, max_tokens),
        "temperature": request.temperature if request.temperature is not None else temperature,
    }
    if system:
        payload["system"] = system
    if request.tools:
        payload["tools"] = [_tool(t) for t in request.tools]
    if request.stop:
        payload["stop_sequences"] = list(request.stop)
    return payload


def anthropic_response(raw: Any, model: str, price: Price) -> ChatResponse:
    """A `ChatResponse` from an Anthropic `Message` (text joined, tool_use blocks as tool calls)."""
    text = "".join(block.text for block in raw.content if block.type == "text")
    calls = tuple(
        ToolCall(id=block.id, name=block.name, arguments=json.dumps(block.input, sort_keys=True))
        for block in raw.content
        if block.type == "tool_use"
    )
    prompt, completion = raw.usage.input_tokens, raw.usage.output_tokens
    return ChatResponse(
        message=Message(role="assistant", content=text or None, tool_calls=calls),
        finish_reason=_FINISH.get(raw.stop_reason or "end_turn", "stop"),
        model=model,
        usage=Usage(
            prompt_tokens=prompt, completion_tokens=completion, cost_usd=price.cost(prompt, completion)
        ),
    )
