"""Helpers for the scale tests: HTTP over a Unix socket, as a sandboxed agent speaks it."""

from __future__ import annotations

import http.client
import json
import socket
from pathlib import Path


class _UnixConnection(http.client.HTTPConnection):
    def __init__(self, path: Path) -> None:
        super().__init__("localhost", timeout=30)
        self._path = str(path)

    def connect(self) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(self._path)


def unix_call(path: Path, method: str, route: str, body: object = None) -> tuple[int, dict]:
    connection = _UnixConnection(path)
    data = json.dumps(body).encode() if body is not None else None
    connection.request(method, route, body=data, headers={"Content-Type": "application/json"})
    reply = connection.getresponse()
    result = reply.status, json.loads(reply.read() or b"{}")
    connection.close()
    return result
