"""The gateway's HTTP layer against hostile clients: bad lengths, floods, trickled requests."""

from __future__ import annotations

import logging
import socket
import threading
import time
from email.message import Message

import pytest

from evolve.llm.gateway_http import BadRequest, ListenerLimits, body_length, listen_unix


def _headers(**values: str) -> Message:
    message = Message()
    for key, value in values.items():
        message[key.replace("_", "-")] = value
    return message


@pytest.mark.parametrize(
    ("method", "headers", "status"),
    [
        ("POST", {}, 400),
        ("POST", {"Content_Length": "-1"}, 400),
        ("POST", {"Content_Length": "abc"}, 400),
        ("POST", {"Content_Length": "+5"}, 400),
        ("POST", {"Content_Length": str(17 * 1024 * 1024)}, 413),
        ("POST", {"Content_Length": "5", "Transfer_Encoding": "chunked"}, 400),
    ],
)
def test_bad_lengths_are_refused_before_reading(method, headers, status):
    with pytest.raises(BadRequest) as refused:
        body_length(method, _headers(**headers))
    assert refused.value.status == status


def test_good_lengths_pass():
    assert body_length("POST", _headers(Content_Length="12")) == 12
    assert body_length("GET", _headers()) == 0


@pytest.fixture
def echo_socket(tmp_path):
    served: list[bytes] = []

    def handle(job_id: str, method: str, path: str, body: bytes) -> tuple[int, bytes]:
        served.append(body)
        return 200, b"{}"

    def start(limits: ListenerLimits | None = None):
        limits = limits or ListenerLimits(connections=4, request_s=1.0, idle_s=1.0)
        path = tmp_path / "gw.sock"
        listener = listen_unix(str(path), "job", handle, limits)
        started.append(listener)
        return path, served

    started: list = []
    yield start
    for listener in started:
        listener.close()


def _raw(path, data: bytes, timeout: float = 5.0) -> bytes:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
        client.settimeout(timeout)
        client.connect(str(path))
        client.sendall(data)
        reply = b""
        while chunk := client.recv(65536):
            reply += chunk
            if b"\r\n\r\n" in reply and b"Connection: close" not in reply:
                break
        return reply


@pytest.mark.parametrize("length", ["-1", "abc", "99999999999"])
def test_a_malformed_request_is_one_log_line_and_no_body_is_read(echo_socket, caplog, length):
    path, served = echo_socket(ListenerLimits(connections=4, request_s=10.0, idle_s=10.0))
    caplog.set_level(logging.WARNING, logger="evolve.llm.gateway_http")
    # The announced body never comes: a server that tried to read it would hang until the deadline.
    started = time.monotonic()
    reply = _raw(path, f"POST /v1/chat/completions HTTP/1.1\r\nContent-Length: {length}\r\n\r\n".encode())
    assert reply.split(b" ")[1] in (b"400", b"413")
    assert time.monotonic() - started < 5  # answered at once, not after the 10 s request deadline
    assert served == []
    records = [r for r in caplog.records if r.name == "evolve.llm.gateway_http"]
    assert len(records) == 1 and records[0].exc_info is None


def test_connections_over_the_limit_are_closed_without_a_thread(echo_socket):
    path, _served = echo_socket(ListenerLimits(connections=4, request_s=5.0, idle_s=5.0))
    before = threading.active_count()
    clients = []
    for _ in range(40):  # half-open: a request line and no more
        client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        clients.append(client)
        client.connect(str(path))
        try:
            client.sendall(b"POST /v1/chat/completions HTTP/1.1\r\n")
        # over the limit: already closed at accept, as it should be
        except (BrokenPipeError, ConnectionResetError):
            continue
    time.sleep(0.5)
    try:
        assert threading.active_count() - before <= 4
    finally:
        for client in clients:
            client.close()


def test_a_trickled_request_is_cut_at_its_deadline(echo_socket):
    path, served = echo_socket(ListenerLimits(connections=4, request_s=1.0, idle_s=1.0))
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
        client.connect(str(path))
        client.sendall(b"POST /v1/chat/completions HTTP/1.1\r\n")
        started = time.monotonic()
        closed = False
        while time.monotonic() - started < 8:
            try:
                client.sendall(b"X-Slow: 1\r\n")  # each line well inside a per-read timeout
            except OSError:
                closed = True
                break
            time.sleep(0.2)
        closed = closed or client.recv(100) == b""
    assert closed and time.monotonic() - started < 6  # deadline 1 s; slack for a loaded machine
    assert served == []


def test_a_good_request_is_served_after_refusals(echo_socket):
    path, served = echo_socket()
    _raw(path, b"POST /v1/chat/completions HTTP/1.1\r\nContent-Length: abc\r\n\r\n")
    reply = _raw(path, b"POST /v1/chat/completions HTTP/1.1\r\nContent-Length: 2\r\n\r\n{}")
    assert reply.startswith(b"HTTP/1.1 200")
    assert served == [b"{}"]
