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
        self.socket_path, self.url, self.token, self.tokens = socket_path, url, token, 0

    def query(self, messages: list[dict], **options: object) -> dict:
        body = {"model": "default", "messages": messages, "max_tokens": 1024,  # the engine's temperature hint
                "temperature": float(os.environ.get("EVOLVE_TEMPERATURE", "0.2")), **options}
        for attempt in range(2):  # the gateway retried already; one more try
            try:
                status, data = self.post(json.dumps(body).encode())
            except (OSError, http.client.HTTPException) as exc:
                status, data, last = 0, b"", f"connection failed: {exc}"
            if status == 200:
                doc = json.loads(data)
                self.tokens += int((doc.get("usage") or {}).get("total_tokens", 0))
                return doc["choices"][0]["message"]
            last = f"HTTP {status}: {data[:300]!r}" if status else last
            if 400 <= status < 500 and status != 429:
                break  # a wrong request (e.g. no tokens left): no retry
            time.sleep(2 ** attempt)
        raise ModelError(last)

    def post(self, payload: bytes) -> tuple[int, bytes]:
        url = urllib.parse.urlparse(self.url or "http://localhost")
        conn = http.client.HTTPConnection(url.hostname, url.port or 80, timeout=self.timeout)
        auth = {"Authorization": f"Bearer {self.token}"} if self.token else {}
        headers = {"Content-Type": "application/json", **auth}
        try:
            if self.socket_path:  # a socket set already
                conn.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                conn.sock.settimeout(self.timeout)
                conn.sock.connect(self.socket_path)
            path = "" if self.socket_path else url.path.rstrip("/").removesuffix("/v1")
            conn.request("POST", path + "/v1/chat/completions", body=payload, headers=headers)
            return (response := conn.getresponse()).status, response.read()
        finally:
            conn.close()
