"""HTTP plumbing of the gateway: a threaded server on a Unix socket (one per job) or on TCP
(jobs told apart by a bearer token). The request logic lives in `Gateway.handle`.

Sandboxed code is the client, so every request is hostile until read: the request line and headers
together stay under `header_bytes` (431 past it), the body must announce a valid `Content-Length` no
larger than `body_bytes`, and the job must admit the request's bytes (its byte budget, its bytes in
flight), all before a byte of the body is read; each connection has a deadline for sending its
request, and a listener serves at most a fixed number of connections at once (more are closed on
accept, no thread made). A malformed request costs one log line, never a traceback.
"""

from __future__ import annotations

import http.client
import json
import logging
import socket
import socketserver
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from http.client import LineTooLong
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Protocol

log = logging.getLogger(__name__)

MAX_BODY_BYTES = 4 * 1024 * 1024


@dataclass(frozen=True)
class ListenerLimits:
    """What one listener lets its clients hold on the host."""

    connections: int = 16
    """Connections served at once; more are closed at accept (no host thread per extra connection)."""
    request_s: float = 30.0
    """Deadline for a client to send one whole request (line, headers and body) once it starts."""
    idle_s: float = 120.0
    """How long a kept-alive connection may wait before its next request."""
    body_bytes: int = MAX_BODY_BYTES
    """Body cap of one request (413 before it is read)."""
    header_bytes: int = 32 * 1024
    """Request line plus headers of one request (431 past it)."""


LINGER_S = 2.0
"""How long a refused connection's unread input is taken and dropped before it is closed."""

UNIX_LIMITS = ListenerLimits()
TCP_LIMITS = ListenerLimits(connections=256)  # shared by every job of a run (process sandbox, relays)


class Handler(Protocol):
    """What serves one job's requests: (method, path, body) -> (status, JSON body bytes)."""

    def __call__(self, job_id: str, method: str, path: str, body: bytes) -> tuple[int, bytes]: ...


JobResolver = Callable[[dict[str, str]], str | None]


class Admit(Protocol):
    """Whether a job takes a request of `size` bytes (line, headers, body) before its body is read:
    the context yields None (taken; its bytes held until the context ends) or (status, why not)."""

    def __call__(self, job_id: str, size: int) -> AbstractContextManager[tuple[int, str] | None]: ...


@contextmanager
def admit_all(job_id: str, size: int) -> Iterator[tuple[int, str] | None]:
    """The admission of a listener with no budget of its own (a worker's relay: the head counts)."""
    yield None


def error_body(message: str, kind: str, code: str | None = None) -> bytes:
    """An OpenAI-style error body."""
    return json.dumps({"error": {"message": message, "type": kind, "code": code}}).encode()


class BadRequest(Exception):
    """A request refused before its body is read: (status, message)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def body_length(method: str, headers: Any, cap: int = MAX_BODY_BYTES) -> int:
    """The number of body bytes to read, or `BadRequest` for a missing/negative/non-numeric/oversized
    Content-Length or any Transfer-Encoding (which would make us read to the end of the stream)."""
    if headers.get("Transfer-Encoding") is not None:
        raise BadRequest(400, "Transfer-Encoding is not supported; send a Content-Length")
    values = headers.get_all("Content-Length") or []
    if not values:
        if method == "POST":
            raise BadRequest(400, "a POST needs a Content-Length")
        return 0
    if len(values) > 1 or not values[0].strip().isdigit():  # isdigit: no sign, no spaces inside
        raise BadRequest(400, f"invalid Content-Length {values[0][:40]!r}")
    length = int(values[0].strip())
    if length > cap:
        raise BadRequest(413, f"request body of {length} bytes is over the {cap}-byte cap")
    return length


class _DeadlineReader:
    """The connection's read side with a wall-clock deadline: each read may wait only what is left,
    so a client trickling a byte at a time still cannot hold its thread past the deadline."""

    def __init__(self, raw: Any, connection: socket.socket, header_bytes: int) -> None:
        self._raw = raw
        self._connection = connection
        self._header_bytes = header_bytes
        self.deadline = time.monotonic()
        self.taken = 0
        """Bytes of the current request read so far (its line and headers, before the body)."""

    def _arm(self) -> None:
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("request deadline passed")
        self._connection.settimeout(left)

    def readline(self, limit: int = -1) -> bytes:
        """A line of the request's head, which may not pass `header_bytes` in all (a header flood)."""
        self._arm()
        left = self._header_bytes - self.taken
        line = self._raw.readline(left + 1 if limit < 0 else min(limit, left + 1))
        self.taken += len(line)
        if self.taken > self._header_bytes:
            raise LineTooLong(f"request line and headers over {self._header_bytes} bytes")
        return line

    def read(self, size: int = -1) -> bytes:
        self._arm()
        return self._raw.read(size)

    def close(self) -> None:
        self._raw.close()


def _handler_class(
    handle: Handler, resolve: JobResolver, limits: ListenerLimits, admit: Admit
) -> type[BaseHTTPRequestHandler]:
    class RequestHandler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def setup(self) -> None:
            super().setup()
            self.rfile = _DeadlineReader(self.rfile, self.connection, limits.header_bytes)  # type: ignore[assignment]

        def handle_one_request(self) -> None:
            # Idle wait for the next request line, then `request_s` for the whole request.
            self.rfile.deadline = time.monotonic() + limits.idle_s  # type: ignore[attr-defined]
            self.rfile.taken = 0  # type: ignore[attr-defined]
            self.request_version, self.command, self.requestline = self.protocol_version, "", ""
            try:
                super().handle_one_request()
            except LineTooLong as exc:  # a request line past the header cap (headers are answered 431)
                self.close_connection = True
                self._refuse(431, str(exc))

        def parse_request(self) -> bool:
            self.rfile.deadline = time.monotonic() + limits.request_s  # type: ignore[attr-defined]
            return super().parse_request()

        def _serve(self, method: str) -> None:
            if not self.path.startswith("/"):  # absolute-form targets (proxy requests) are refused
                self._refuse(400, f"request target must be a path, not {self.path[:60]!r}")
                return
            try:
                length = body_length(method, self.headers, limits.body_bytes)
            except BadRequest as exc:
                self._refuse(exc.status, str(exc))
                return
            job_id = resolve({k.lower(): v for k, v in self.headers.items()})
            if job_id is None:
                self.close_connection = True  # its body stays unread
                self._reply(401, error_body("unknown or missing job token", "authentication_error"))
                return
            with admit(job_id, self.rfile.taken + length) as refused:  # type: ignore[attr-defined]
                if refused is not None:
                    self.close_connection = True  # its body stays unread
                    kind, code = (
                        ("budget_exceeded", "byte_budget_exceeded")
                        if refused[0] == 403
                        else ("rate_limit_error", "bytes_in_flight")
                    )
                    self._reply(refused[0], error_body(refused[1], kind, code))
                    return
                body = self.rfile.read(length) if length else b""
                if len(body) < length:
                    self._refuse(400, f"body ended after {len(body)} of {length} bytes")
                    return
                status, data = handle(job_id, method, self.path, body)
                del body  # held no longer than the answer needs
                self._reply(status, data)

        def _refuse(self, status: int, message: str) -> None:
            log.warning("gateway refused a malformed request (%d): %s", status, message)
            self.close_connection = True  # the unread body must not be parsed as the next request
            self._reply(status, error_body(message, "invalid_request_error"))

        def finish(self) -> None:
            super().finish()
            if self.close_connection:
                self._linger()

        def _linger(self) -> None:
            """After a refusal, take (and drop) what the client still sends, within `LINGER_*`, before the
            server closes: closing over unread bytes would reset the connection, and the client would
            lose the answer that says what was wrong."""
            try:
                self.connection.shutdown(socket.SHUT_WR)
                deadline, left = time.monotonic() + LINGER_S, limits.body_bytes + limits.header_bytes
                while left > 0 and (wait := deadline - time.monotonic()) > 0:
                    self.connection.settimeout(wait)
                    chunk = self.connection.recv(min(left, 65536))
                    if not chunk:
                        break
                    left -= len(chunk)
            except OSError:
                pass  # the client is gone or slow: closing now is all that is left to do

        def _reply(self, status: int, data: bytes) -> None:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            if self.close_connection:
                self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            self._serve("GET")

        def do_POST(self) -> None:
            self._serve("POST")

        def address_string(self) -> str:  # a Unix socket peer has no address
            return "local"

        def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
            return  # exchanges are recorded as JSONL; per-request access logs would only add noise

        def log_message(self, format: str, *args: Any) -> None:
            # Only errors reach here (log_request is silent): a bad request line, a timeout.
            log.warning("gateway refused a malformed request: %s", (format % args)[:200])

    return RequestHandler


class _Bounded:
    """Mixin for a threading server: at most `limits.connections` connections at once; one over is
    closed at accept, before any thread exists for it. Errors are one log line, not a traceback."""

    limits: ListenerLimits
    _slots: threading.BoundedSemaphore

    def process_request(self, request: Any, client_address: Any) -> None:
        if not self._slots.acquire(blocking=False):
            log.warning("gateway closed a connection: %d connections already open", self.limits.connections)
            self.shutdown_request(request)  # type: ignore[attr-defined]
            return
        try:
            super().process_request(request, client_address)  # type: ignore[misc]
        except BaseException:
            self._slots.release()
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)  # type: ignore[misc]
        finally:
            self._slots.release()

    def handle_error(self, request: Any, client_address: Any) -> None:
        exc = sys.exc_info()[1]
        log.warning("gateway dropped a connection: %s: %s", type(exc).__name__, exc)


class _UnixHTTPServer(_Bounded, socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True
    block_on_close = False

    def __init__(self, path: str, handler: type[BaseHTTPRequestHandler], limits: ListenerLimits) -> None:
        self.limits, self._slots = limits, threading.BoundedSemaphore(limits.connections)
        super().__init__(path, handler)

    def server_bind(self) -> None:
        socketserver.UnixStreamServer.server_bind(self)
        self.server_name, self.server_port = "localhost", 0


class _TCPServer(_Bounded, ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False

    def __init__(
        self, address: tuple[str, int], handler: type[BaseHTTPRequestHandler], limits: ListenerLimits
    ) -> None:
        self.limits, self._slots = limits, threading.BoundedSemaphore(limits.connections)
        super().__init__(address, handler)


class Listener:
    """One running HTTP server (its own thread) until `close()`."""

    def __init__(self, server: socketserver.BaseServer) -> None:
        self._server = server
        # `close` waits for the serving loop to look up (every poll interval): a job's close is on its path.
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True, name="evolve-gateway"
        )
        self._thread.start()

    @property
    def address(self) -> Any:
        return self._server.server_address

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)


def listen_unix(
    path: str, job_id: str, handle: Handler, limits: ListenerLimits = UNIX_LIMITS, admit: Admit = admit_all
) -> Listener:
    """Serve one job on a Unix socket at `path` (the socket identifies the job)."""
    return Listener(
        _UnixHTTPServer(path, _handler_class(handle, lambda headers: job_id, limits, admit), limits)
    )


def listen_tcp(
    host: str,
    port: int,
    resolve: JobResolver,
    handle: Handler,
    limits: ListenerLimits = TCP_LIMITS,
    admit: Admit = admit_all,
) -> Listener:
    """Serve all jobs on TCP; `resolve` maps request headers to a job id (or None: refused)."""
    return Listener(_TCPServer((host, port), _handler_class(handle, resolve, limits, admit), limits))


class _UnixConnection(http.client.HTTPConnection):
    """HTTP to a listener on a Unix socket (a job's channel, as a sandbox reaches it)."""

    def __init__(self, path: str, timeout_s: float) -> None:
        super().__init__("gateway", timeout=timeout_s)
        self._path = path

    def connect(self) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(self.timeout)
        self.sock.connect(self._path)


def post_unix(path: str, route: str, body: bytes, timeout_s: float) -> tuple[int, bytes]:
    """POST `body` (JSON) to `route` of the listener at the Unix socket `path`: the status and the body read
    back (the engine's own requests on a job's channel, so they are counted and recorded as a sandbox's)."""
    connection = _UnixConnection(path, timeout_s)
    try:
        connection.request("POST", route, body, {"Content-Type": "application/json"})
        answer = connection.getresponse()
        return answer.status, answer.read(MAX_BODY_BYTES)
    finally:
        connection.close()
