"""Talking to the model: OpenAI chat completions through the gateway (HTTP over a Unix socket or TCP)."""

from __future__ import annotations

import http.client
import json
import os
import socket
import time
import urllib.parse
from dataclasses import dataclass, field
from typing import Protocol


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    arguments: str  # JSON text as the model wrote it; parsed tolerantly later


@dataclass(frozen=True)
class Message:
    role: str  # system | user | assistant | tool
    content: str
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None

    def to_wire(self) -> dict:
        wire: dict = {"role": self.role, "content": self.content}
        if self.tool_calls:
            wire["tool_calls"] = [
                {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
                for c in self.tool_calls
            ]
        if self.tool_call_id is not None:
            wire["tool_call_id"] = self.tool_call_id
        return wire


@dataclass(frozen=True)
class Reply:
    content: str
    tool_calls: tuple[ToolCall, ...] = ()
    tokens: int = 0


class Model(Protocol):
    def query(self, messages: list[Message], tools: list[dict] | None = None) -> Reply: ...


class ModelError(Exception):
    """The gateway refused or failed a request (after retries)."""


class UnixHTTPConnection(http.client.HTTPConnection):
    """http.client over an AF_UNIX socket: the gateway's per-job channel."""

    def __init__(self, socket_path: str, timeout: float) -> None:
        super().__init__("localhost", timeout=timeout)
        self.socket_path = socket_path

    def connect(self) -> None:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(self.timeout)
        sock.connect(self.socket_path)
        self.sock = sock


@dataclass
class GatewayModel:
    """The real model: `EVOLVE_LLM_SOCKET` (Unix socket) or `EVOLVE_LLM_URL` (http://host:port)."""

    socket_path: str | None = None
    url: str | None = None
    model: str = "default"
    temperature: float = 0.2
    max_tokens: int = 1024
    timeout: float = 1860.0  # above the gateway's longest call (retry window + attempt timeout <= 1800 s)
    attempts: int = 2  # the gateway already retried the provider; one more try after its final answer
    token: str | None = None  # bearer token for the gateway's shared TCP port
    stop: tuple[str, ...] = ()  # the text protocol stops at a block's closing fence: no rambling after it
    total_tokens: int = field(default=0)

    @classmethod
    def from_env(cls) -> GatewayModel:
        sock, url = os.environ.get("EVOLVE_LLM_SOCKET"), os.environ.get("EVOLVE_LLM_URL")
        if not sock and not url:
            raise ModelError("neither EVOLVE_LLM_SOCKET nor EVOLVE_LLM_URL is set")
        return cls(socket_path=sock or None, url=url or None, model=os.environ.get("EVOLVE_LLM_MODEL", "default"),
                   max_tokens=int(os.environ.get("EVOLVE_LLM_MAX_TOKENS", "1024")),
                   token=os.environ.get("EVOLVE_LLM_TOKEN") or None)

    def _connection(self) -> tuple[http.client.HTTPConnection, str]:
        if self.socket_path:
            return UnixHTTPConnection(self.socket_path, self.timeout), "/v1/chat/completions"
        parsed = urllib.parse.urlparse(self.url or "")
        base = parsed.path.rstrip("/")
        path = base + ("/chat/completions" if base.endswith("/v1") else "/v1/chat/completions")
        return http.client.HTTPConnection(parsed.hostname, parsed.port or 80, timeout=self.timeout), path

    def query(self, messages: list[Message], tools: list[dict] | None = None) -> Reply:
        body: dict = {"model": self.model, "messages": [m.to_wire() for m in messages],
                      "temperature": self.temperature, "max_tokens": self.max_tokens}
        if tools:
            body["tools"] = tools
        if self.stop:
            body["stop"] = list(self.stop)
        last = "no attempt"
        for attempt in range(self.attempts):
            try:
                status, data = self._post(json.dumps(body).encode())
            except (OSError, http.client.HTTPException) as exc:
                last = f"connection failed: {exc}"
            else:
                if status == 200:
                    return self._reply(data)
                last = f"HTTP {status}: {data[:300]!r}"
                if 400 <= status < 500 and status != 429:
                    break  # our request is wrong; retrying will not help
            time.sleep(min(2**attempt, 10))
        raise ModelError(last)

    def _post(self, payload: bytes) -> tuple[int, bytes]:
        conn, path = self._connection()
        try:
            headers = {"Content-Type": "application/json"}
            if self.token:
                headers["Authorization"] = f"Bearer {self.token}"
            conn.request("POST", path, body=payload, headers=headers)
            response = conn.getresponse()
            return response.status, response.read()
        finally:
            conn.close()

    def _reply(self, data: bytes) -> Reply:
        doc = json.loads(data)
        message = doc["choices"][0]["message"]
        calls = tuple(
            ToolCall(c.get("id", f"call_{i}"), c["function"]["name"], c["function"].get("arguments") or "{}")
            for i, c in enumerate(message.get("tool_calls") or [])
        )
        tokens = int((doc.get("usage") or {}).get("total_tokens", 0))
        self.total_tokens += tokens
        return Reply(content=message.get("content") or "", tool_calls=calls, tokens=tokens)


@dataclass
class ScriptedModel:
    """A deterministic fake: returns the scripted replies in order and records what it was asked."""

    replies: list[Reply]
    seen: list[list[Message]] = field(default_factory=list)

    def query(self, messages: list[Message], tools: list[dict] | None = None) -> Reply:
        self.seen.append(list(messages))
        if not self.replies:
            raise ModelError("the scripted model has no replies left")
        return self.replies.pop(0)
