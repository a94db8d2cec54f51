"""Helpers for the llm tests: speak HTTP over a job's Unix socket, as a sandboxed agent would."""

from __future__ import annotations

import http.client
import json
import socket
from pathlib import Path

import pytest

from evolve.llm.gateway import Gateway
from evolve.standins.models import every_role


class _UnixConnection(http.client.HTTPConnection):
    def __init__(self, path: Path) -> None:
        super().__init__("localhost", timeout=30)
        self._path = str(path)

    def connect(self) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(self._path)


def unix_call(path: Path, method: str, route: str, body: object = None) -> tuple[int, bytes]:
    connection = _UnixConnection(path)
    data = json.dumps(body).encode() if body is not None else None
    headers = {"Content-Type": "application/json"} if data else {}
    connection.request(method, route, body=data, headers=headers)
    reply = connection.getresponse()
    result = reply.status, reply.read()
    connection.close()
    return result


def unix_json(path: Path, method: str, route: str, body: object = None) -> tuple[int, dict]:
    status, data = unix_call(path, method, route, body)
    return status, json.loads(data or b"{}")


def chat_body(text: str, **extra: object) -> dict:
    return {"model": "anything", "messages": [{"role": "user", "content": text}], **extra}


@pytest.fixture
def chat():
    return chat_body


@pytest.fixture
def get():
    def call(path: Path, route: str) -> tuple[int, bytes]:
        return unix_call(path, "GET", route)

    return call


@pytest.fixture
def post():
    def call(path: Path, body: object) -> tuple[int, bytes]:
        return unix_call(path, "POST", "/v1/chat/completions", body)

    return call


@pytest.fixture
def api_keys(monkeypatch) -> None:
    """Keys the SDK clients want before they send (to the stand-in server, never a real API)."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")


@pytest.fixture
def gateway_for():
    """A gateway that serves one model in every role; keyword args go to `Gateway`."""

    def make(model, **options: object) -> Gateway:
        return Gateway(every_role(model), **options)

    return make
