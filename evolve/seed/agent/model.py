"""The model, through the evolve gateway: OpenAI chat completions over a Unix socket (or TCP)."""
import http.client
import json
import os
import socket
import time
import urllib.parse


class ModelError(Exception):
    """The gateway refused or failed a request."""


class Model:
    """Messages are OpenAI wire dicts; `query` returns the reply message."""

    timeout = 1860.0  # above the gateway's longest call (1800 s)

    def __init__(self, socket_path: str | None = None, url: str | None = None, token: str | None = None):
        self.socket_path = socket_path
        self.url = url
        self.token = token
        self.tokens = 0

    def query(self, messages: list[dict], **options: object) -> dict:
        """The reply message; `options` (e.g. `stop`) add to or override the defaults."""
        body = {
            "model": "default",
            "messages": messages,
            "max_tokens": 1024,
            "temperature": float(os.environ.get("EVOLVE_TEMPERATURE", "0.2")),  # the engine's hint
            **options,
        }
        error = ""
        for attempt in range(2):  # the gateway retried already; one more try
            try:
                status, data = self.post(json.dumps(body).encode())
            except (OSError, http.client.HTTPException) as exc:
                status = 0
                data = b""
                error = f"connection failed: {exc}"
            if status == 200:
                return self.reply(data)
            if status:
                error = f"HTTP {status}: {data[:300]!r}"
            if 400 <= status < 500 and status != 429:
                break  # a wrong request (e.g. no tokens left): no retry
            time.sleep(2 ** attempt)
        raise ModelError(error)

    def reply(self, data: bytes) -> dict:
        """The first choice's message; its tokens counted."""
        document = json.loads(data)
        usage = document.get("usage") or {}
        self.tokens += int(usage.get("total_tokens", 0))
        return document["choices"][0]["message"]

    def post(self, payload: bytes) -> tuple[int, bytes]:
        """(status, body) of the chat completions POST."""
        url = urllib.parse.urlparse(self.url or "http://localhost")
        connection = http.client.HTTPConnection(url.hostname, url.port or 80, timeout=self.timeout)
        headers = {"Content-Type": "application/json"}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        path = "" if self.socket_path else url.path.rstrip("/").removesuffix("/v1")
        try:
            if self.socket_path:  # a socket set already: no TCP connection
                connection.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                connection.sock.settimeout(self.timeout)
                connection.sock.connect(self.socket_path)
            connection.request("POST", path + "/v1/chat/completions", body=payload, headers=headers)
            response = connection.getresponse()
            return response.status, response.read()
        finally:
            connection.close()
