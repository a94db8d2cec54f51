"""Deterministic stand-ins for tests: a scripted `ChatModel` and a tiny OpenAI-style HTTP server.

They ship in the package so tests (and `python -m evolve.standins.models`, a stand-in server executable)
need no mocks; nothing uses them by default.
"""

from __future__ import annotations

import argparse
import json
import threading
import time
from collections.abc import Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

from evolve.llm.budget import prompt_token_bound
from evolve.llm.types import ChatRequest, ChatResponse, Message, Usage
from evolve.meta.validate import SMOKE_STATEMENT

FAKE_MAX_TOKENS = 1024
"""The completion cap the scripted models claim, as a local server's default would be."""
SMOKE_MARKER = SMOKE_STATEMENT.strip()[:40]
"""What a scripted model finds in the gate's smoke task (evolve/meta/validate.py) to answer it."""


def _words(request: ChatRequest) -> int:
    return sum(len((m.content or "").split()) for m in request.messages)


def fake_completion_cap(request: ChatRequest) -> int:
    """The caller's cap within `FAKE_MAX_TOKENS` and the engine's ceiling (`ChatModel.completion_cap`)."""
    return min(request.max_tokens or FAKE_MAX_TOKENS, request.ceiling or FAKE_MAX_TOKENS, FAKE_MAX_TOKENS)


class ScriptedModel:
    """Answers with the scripted replies in order (then repeats the last); usage counts words."""

    def __init__(self, replies: Sequence[str | Message], name: str = "scripted") -> None:
        if not replies:
            raise ValueError("ScriptedModel needs at least one reply")
        self.name = name
        self._replies = [
            r if isinstance(r, Message) else Message(role="assistant", content=r) for r in replies
        ]
        self._lock = threading.Lock()
        self.requests: list[ChatRequest] = []

    def completion_cap(self, request: ChatRequest) -> int:
        return fake_completion_cap(request)

    def complete(self, request: ChatRequest) -> ChatResponse:
        with self._lock:
            reply = self._replies[min(len(self.requests), len(self._replies) - 1)]
            self.requests.append(request)
        return ChatResponse(
            message=reply,
            finish_reason="tool_calls" if reply.tool_calls else "stop",
            model=self.name,
            usage=Usage(prompt_tokens=_words(request), completion_tokens=len((reply.content or "").split())),
        )


def every_role(model: Any) -> dict[str, Any]:
    """One model serving each role a gateway routes (solve, modify, diagnose)."""
    return {"solve": model, "modify": model, "diagnose": model}


class GreedyModel:
    """Spends every token it is allowed (prompt bound + the ceiling it is sent), slowly: a budget's
    adversary."""

    name = "greedy"
    completion_cap = staticmethod(fake_completion_cap)

    def __init__(self, delay_s: float) -> None:
        self.delay_s = delay_s

    def complete(self, request: ChatRequest) -> ChatResponse:
        time.sleep(self.delay_s)
        usage = Usage(prompt_tokens=prompt_token_bound(request), completion_tokens=request.ceiling or 10**6)
        return ChatResponse(message=Message(role="assistant", content="x"), model=self.name, usage=usage)


class FailsOn:
    """Fails as a failed service would (`unavailable`, HTTP 500) on every request whose text holds
    `marker`, and passes the others to `model`: a provider that cannot handle one body while it
    answers the rest (`down=True`: it fails every request, a real outage)."""

    def __init__(self, model: Any, marker: str, *, down: bool = False) -> None:
        self.name = model.name
        self._model = model
        self._marker = marker
        self.down = down
        self.failed = 0

    def completion_cap(self, request: ChatRequest) -> int:
        return self._model.completion_cap(request)

    def complete(self, request: ChatRequest) -> ChatResponse:
        from evolve.llm.failures import ModelError

        text = json.dumps(request.model_dump(mode="json"))
        if self.down or self._marker in text:
            self.failed += 1
            raise ModelError(
                "model call failed: InternalServerError: Error code: 500",
                "unavailable",
                500,
                "The server had an error while processing your request.",
            )
        return self._model.complete(request)


class RoutedModel:
    """Answers by rule: the reply of the first `(marker, reply)` whose marker is in the last user
    message, else `default`. Unlike `ScriptedModel` it answers each job alike, however many run."""

    def __init__(self, rules: Sequence[tuple[str, str]], default: str, name: str = "routed") -> None:
        self.name = name
        self._rules = list(rules)
        self._default = default

    def completion_cap(self, request: ChatRequest) -> int:
        return fake_completion_cap(request)

    def complete(self, request: ChatRequest) -> ChatResponse:
        last = next((m.content or "" for m in reversed(request.messages) if m.role == "user"), "")
        reply = next((r for marker, r in self._rules if marker in last), self._default)
        return ChatResponse(
            message=Message(role="assistant", content=reply),
            model=self.name,
            usage=Usage(prompt_tokens=_words(request), completion_tokens=len(reply.split())),
        )


class Charged:
    """A model billed as a hosted one: `dollars_per_token` on every token of its usage (tests of the dollar
    budget with scripted models, which cost nothing)."""

    def __init__(self, model: Any, dollars_per_token: float) -> None:
        self._model = model
        self.name = getattr(model, "name", "charged")
        self.dollars_per_token = dollars_per_token

    def completion_cap(self, request: ChatRequest) -> int:
        return int(self._model.completion_cap(request))

    def complete(self, request: ChatRequest) -> ChatResponse:
        response: ChatResponse = self._model.complete(request)
        bill = response.usage.total_tokens * self.dollars_per_token
        usage = response.usage.model_copy(update={"cost_usd": response.usage.cost_usd + bill})
        return response.model_copy(update={"usage": usage})


class FakeOpenAIServer:
    """An OpenAI-style server on 127.0.0.1 that fails the first `failures` chat requests with
    `fail_status`, then answers "ok" (after `delay_s`, a stand-in for generation time); it counts the
    chat requests it saw."""

    def __init__(
        self,
        *,
        failures: int = 0,
        fail_status: int = 500,
        model: str = "fake",
        port: int = 0,
        delay_s: float = 0.0,
    ):
        self.model = model
        self.delay_s = delay_s
        self.chat_requests = 0
        self._failures = failures
        self._fail_status = fail_status
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", port), self._handler_class())
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def _next_status(self) -> int:
        with self._lock:
            self.chat_requests += 1
            if self._failures > 0:
                self._failures -= 1
                return self._fail_status
            return 200

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def _send(self, status: int, body: dict[str, Any]) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                if self.path.rstrip("/") in ("/v1/models", "/health"):
                    self._send(200, {"object": "list", "data": [{"id": owner.model, "object": "model"}]})
                else:
                    self._send(404, {"error": {"message": "not found"}})

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                status = owner._next_status()
                if status != 200:
                    self._send(status, {"error": {"message": f"scripted failure {status}", "type": "fake"}})
                    return
                time.sleep(owner.delay_s)
                words = sum(len(str(m.get("content") or "").split()) for m in body.get("messages", []))
                self._send(
                    200,
                    {
                        "id": "chatcmpl-fake",
                        "object": "chat.completion",
                        "created": 0,
                        "model": owner.model,
                        "choices": [
                            {
                                "index": 0,
                                "message": {"role": "assistant", "content": "ok"},
                                "finish_reason": "stop",
                            }
                        ],
                        "usage": {"prompt_tokens": words, "completion_tokens": 1, "total_tokens": words + 1},
                    },
                )

            def log_message(self, format: str, *args: Any) -> None:
                return

        return Handler

    def start(self) -> Self:
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def main(argv: Sequence[str] | None = None) -> None:
    """Run the fake server in the foreground (a stand-in for `vllm serve` in tests)."""
    parser = argparse.ArgumentParser(prog="python -m evolve.standins.models")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--model", default="fake")
    parser.add_argument("--delay", type=float, default=0.0, help="seconds before each answer")
    args, _ = parser.parse_known_args(argv)
    server = FakeOpenAIServer(model=args.model, port=args.port, delay_s=args.delay)
    try:
        server._server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server._server.server_close()


if __name__ == "__main__":
    main()
