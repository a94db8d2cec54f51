"""HTTP plumbing of the gateway: a threaded server on a Unix socket (one per job) or on TCP
(jobs told apart by a bearer token). The request logic lives in `Gateway.handle`."""

from __future__ import annotations

import json
import socketserver
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Protocol

MAX_BODY_BYTES = 16 * 1024 * 1024


class Handler(Protocol):
    """What serves one job's requests: (method, path, body) -> (status, JSON body bytes)."""

    def __call__(self, job_id: str, method: str, path: str, body: bytes) -> tuple[int, bytes]: ...


JobResolver = Callable[[dict[str, str]], str | None]


def error_body(message: str, kind: str, code: str | None = None) -> bytes:
    """An OpenAI-style error body."""
    return json.dumps({"error": {"message": message, "type": kind, "code": code}}).encode()


def _handler_class(handle: Handler, resolve: JobResolver) -> type[BaseHTTPRequestHandler]:
    class RequestHandler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def _serve(self, method: str) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            if length > MAX_BODY_BYTES:
                self._reply(413, error_body("request body too large", "invalid_request_error"))
                return
            body = self.rfile.read(length) if length else b""
            job_id = resolve({k.lower(): v for k, v in self.headers.items()})
            if job_id is None:
                self._reply(401, error_body("unknown or missing job token", "authentication_error"))
                return
            status, data = handle(job_id, method, self.path, body)
            self._reply(status, data)

        def _reply(self, status: int, data: bytes) -> None:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            self._serve("GET")

        def do_POST(self) -> None:
            self._serve("POST")

        def address_string(self) -> str:  # a Unix socket peer has no address
            return "local"

        def log_message(self, format: str, *args: Any) -> None:
            return  # exchanges are recorded as JSONL; per-request access logs would only add noise

    return RequestHandler


class _UnixHTTPServer(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True
    block_on_close = False

    def server_bind(self) -> None:
        socketserver.UnixStreamServer.server_bind(self)
        self.server_name, self.server_port = "localhost", 0


class _TCPServer(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False


class Listener:
    """One running HTTP server (its own thread) until `close()`."""

    def __init__(self, server: socketserver.BaseServer) -> None:
        self._server = server
        self._thread = threading.Thread(target=server.serve_forever, daemon=True, name="evolve-gateway")
        self._thread.start()

    @property
    def address(self) -> Any:
        return self._server.server_address

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)


def listen_unix(path: str, job_id: str, handle: Handler) -> Listener:
    """Serve one job on a Unix socket at `path` (the socket identifies the job)."""
    return Listener(_UnixHTTPServer(path, _handler_class(handle, lambda headers: job_id)))


def listen_tcp(host: str, port: int, resolve: JobResolver, handle: Handler) -> Listener:
    """Serve all jobs on TCP; `resolve` maps request headers to a job id (or None: refused)."""
    return Listener(_TCPServer((host, port), _handler_class(handle, resolve)))
