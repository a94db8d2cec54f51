"""A stand-in for the hosted APIs, for tests only: OpenAI's `/v1/chat/completions` and Anthropic's
`/v1/messages` on 127.0.0.1, answering with the response and error shapes the providers document.

Each request takes the next scripted `Answer` (the last one repeats); the request is recorded. Before
answering it checks what the real API checks and a wrong client would trip over: OpenAI reasoning
models refuse `max_tokens`, `temperature`, `top_p` and `stop` (400 `unsupported_parameter`);
Anthropic refuses empty text blocks, no messages, and fields its API does not define.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

_REASONING = re.compile(r"^(o1|o3|o4)(-|$)|^gpt-([5-9]|[1-9][0-9])(?!.*-chat)")
_ANTHROPIC_FIELDS = {
    "model",
    "messages",
    "max_tokens",
    "system",
    "tools",
    "tool_choice",
    "stop_sequences",
    "metadata",
    "temperature",
    "top_p",
    "top_k",
    "thinking",
    "stream",
    "service_tier",
    "container",
    "output_config",
}


@dataclass(frozen=True)
class Answer:
    """One scripted HTTP answer."""

    status: int
    body: dict[str, Any]
    headers: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Seen:
    """One request the stand-in received."""

    path: str
    headers: dict[str, str]
    body: dict[str, Any]


# -- OpenAI shapes (platform.openai.com/docs/api-reference/chat/object, .../guides/error-codes) ----------


def openai_text(text: str = "ok", *, prompt: int = 10, completion: int = 2, cached: int = 0) -> Answer:
    return _openai_message(
        {"role": "assistant", "content": text, "refusal": None}, "stop", prompt, completion, cached
    )


def openai_tool_call(name: str, arguments: dict[str, Any], *, call_id: str = "call_1") -> Answer:
    call = {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}
    return _openai_message(
        {"role": "assistant", "content": None, "refusal": None, "tool_calls": [call]}, "tool_calls", 20, 8, 0
    )


def openai_refusal(text: str = "I'm sorry, I can't help with that.") -> Answer:
    return _openai_message({"role": "assistant", "content": None, "refusal": text}, "stop", 10, 9, 0)


def _openai_message(
    message: dict[str, Any], finish: str, prompt: int, completion: int, cached: int
) -> Answer:
    return Answer(
        200,
        {
            "id": "chatcmpl-standin",
            "object": "chat.completion",
            "created": 1_700_000_000,
            "model": "standin",
            "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish}],
            "usage": {
                "prompt_tokens": prompt,
                "completion_tokens": completion,
                "total_tokens": prompt + completion,
                "prompt_tokens_details": {"cached_tokens": cached, "audio_tokens": 0},
                "completion_tokens_details": {"reasoning_tokens": 0},
            },
        },
    )


def openai_error(
    status: int,
    message: str,
    kind: str,
    code: str | None = None,
    param: str | None = None,
    headers: dict[str, str] | None = None,
) -> Answer:
    return Answer(
        status, {"error": {"message": message, "type": kind, "param": param, "code": code}}, headers or {}
    )


def openai_rate_limited(retry_after_s: float = 20) -> Answer:
    return openai_error(
        429,
        "Rate limit reached for requests",
        "requests",
        "rate_limit_exceeded",
        headers={"retry-after": str(retry_after_s), "x-ratelimit-remaining-requests": "0"},
    )


def openai_quota_spent() -> Answer:
    return openai_error(
        429,
        "You exceeded your current quota, please check your plan and billing details.",
        "insufficient_quota",
        "insufficient_quota",
    )


def openai_context_overflow() -> Answer:
    return openai_error(
        400,
        "This model's maximum context length is 128000 tokens. However, your messages "
        "resulted in 131072 tokens. Please reduce the length of the messages.",
        "invalid_request_error",
        "context_length_exceeded",
        "messages",
    )


def openai_bad_key() -> Answer:
    return openai_error(
        401,
        "Incorrect API key provided: sk-test. You can find your API key at "
        "https://platform.openai.com/account/api-keys.",
        "invalid_request_error",
        "invalid_api_key",
    )


def openai_server_error(status: int = 500) -> Answer:
    return openai_error(
        status, "The server had an error while processing your request. Sorry about that!", "server_error"
    )


# -- Anthropic shapes (docs.anthropic.com/en/api/messages, .../api/errors) ---------------------------------


def anthropic_message(
    content: Sequence[dict[str, Any]],
    stop_reason: str = "end_turn",
    *,
    input_tokens: int = 10,
    output_tokens: int = 2,
    cache_read: int = 0,
    cache_write: int = 0,
) -> Answer:
    return Answer(
        200,
        {
            "id": "msg_standin",
            "type": "message",
            "role": "assistant",
            "model": "standin",
            "content": list(content),
            "stop_reason": stop_reason,
            "stop_sequence": None,
            "usage": {
                "input_tokens": input_tokens,
                "output_tokens": output_tokens,
                "cache_creation_input_tokens": cache_write,
                "cache_read_input_tokens": cache_read,
            },
        },
    )


def anthropic_text(text: str = "ok", **usage: int) -> Answer:
    return anthropic_message([{"type": "text", "text": text}], "end_turn", **usage)


def anthropic_tool_use(name: str, arguments: dict[str, Any], *, call_id: str = "toolu_1") -> Answer:
    return anthropic_message(
        [
            {"type": "text", "text": "Running it."},
            {"type": "tool_use", "id": call_id, "name": name, "input": arguments},
        ],
        "tool_use",
    )


def anthropic_refusal() -> Answer:
    return anthropic_message([], "refusal", output_tokens=0)


def anthropic_error(status: int, kind: str, message: str, headers: dict[str, str] | None = None) -> Answer:
    body = {"type": "error", "error": {"type": kind, "message": message}, "request_id": "req_standin"}
    return Answer(status, body, headers or {})


def anthropic_rate_limited(retry_after_s: float = 20) -> Answer:
    return anthropic_error(
        429,
        "rate_limit_error",
        "Number of request tokens has exceeded your per-minute rate limit",
        {"retry-after": str(int(retry_after_s))},
    )


def anthropic_overloaded() -> Answer:
    return anthropic_error(529, "overloaded_error", "Overloaded")


def anthropic_context_overflow() -> Answer:
    return anthropic_error(400, "invalid_request_error", "prompt is too long: 210000 tokens > 200000 maximum")


def anthropic_bad_key() -> Answer:
    return anthropic_error(401, "authentication_error", "invalid x-api-key")


# -- the server ---------------------------------------------------------------------------------------------


def _openai_refusal_of(body: dict[str, Any]) -> Answer | None:
    if not _REASONING.search(str(body.get("model", "")).lower()):
        return None
    for name in ("max_tokens", "temperature", "top_p", "stop"):
        if name in body:
            return openai_error(
                400,
                f"Unsupported parameter: '{name}' is not supported with this model.",
                "invalid_request_error",
                "unsupported_parameter",
                name,
            )
    return None


def _anthropic_refusal_of(body: dict[str, Any]) -> Answer | None:
    unknown = sorted(set(body) - _ANTHROPIC_FIELDS)
    if unknown:
        return anthropic_error(400, "invalid_request_error", f"{unknown[0]}: Extra inputs are not permitted")
    if not body.get("messages"):
        return anthropic_error(400, "invalid_request_error", "messages: at least one message is required")
    for turn in body["messages"]:
        content = turn.get("content")
        if not content:
            return anthropic_error(
                400, "invalid_request_error", "messages: all messages must have non-empty content"
            )
        for block in content if isinstance(content, list) else ():
            if block.get("type") == "text" and not block.get("text", "").strip():
                return anthropic_error(
                    400, "invalid_request_error", "messages: text content blocks must be non-empty"
                )
    return None


class StandinServer:
    """Answers the scripted `answers` in order (the last repeats); `seen` records every request."""

    def __init__(self, answers: Sequence[Answer]) -> None:
        if not answers:
            raise ValueError("StandinServer needs at least one answer")
        self._answers = list(answers)
        self._lock = threading.Lock()
        self.seen: list[Seen] = []
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        """The root URL (Anthropic's SDK takes it as is; OpenAI's takes `url + "/v1"`)."""
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def _answer(self, path: str, headers: dict[str, str], body: dict[str, Any]) -> Answer:
        with self._lock:
            self.seen.append(Seen(path, headers, body))
            scripted = self._answers[min(len(self.seen) - 1, len(self._answers) - 1)]
        check = _anthropic_refusal_of(body) if path.endswith("/messages") else _openai_refusal_of(body)
        return check or scripted

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
                answer = owner._answer(self.path, {k.lower(): v for k, v in self.headers.items()}, body)
                data = json.dumps(answer.body).encode()
                self.send_response(answer.status)
                for name, value in {"content-type": "application/json", **answer.headers}.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:
                return  # tests read `seen`, not access logs

        return Handler

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
