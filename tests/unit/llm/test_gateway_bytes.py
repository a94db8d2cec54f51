"""The gateway's host side is bounded by the job's byte budget: every byte received and every byte of the
exchange log counts, bytes in flight are capped, and header floods and over-long lines are cut early."""

from __future__ import annotations

import json
import socket
import threading

from evolve.llm.budget import GatewayLimits
from evolve.llm.gateway import Gateway
from evolve.standins.models import GreedyModel, ScriptedModel, every_role

from .test_gateway_attribution import _raw_post


def _padded(size: int, text: str = "hi") -> bytes:
    """A valid request padded with whitespace outside every string (bytes the model never counts)."""
    core = json.dumps({"messages": [{"role": "user", "content": text}]}).encode()
    return core[:-1] + b" " * max(size - len(core), 0) + b"}"


def test_bytes_outside_the_token_count_spend_the_byte_budget_and_the_log_stays_within_it(tmp_path):
    model = ScriptedModel(["ok"])
    limits = GatewayLimits(bytes_per_token=64)
    with Gateway(every_role(model), exchanges_dir=tmp_path, limits=limits) as gateway:
        job = gateway.open_job("j", "n", "solve", token_budget=10_000)  # 640,000 bytes
        statuses = [_raw_post(job.socket_path, _padded(100_000))[0] for _ in range(10)]
        refused = _raw_post(job.socket_path, _padded(100_000))[1]
        used = gateway._jobs["j"].bytes.used
        report = gateway.close_job("j")
    assert statuses[:5] == [200] * 5 and statuses[-1] == 403
    assert (
        refused["error"]["code"] == "byte_budget_exceeded"
        and "byte budget exhausted" in refused["error"]["message"]
    )
    log = (tmp_path / "job-j.jsonl").stat().st_size
    assert used <= 640_000 and log + sum(1 for s in statuses if s == 200) * 100_000 <= 640_000
    assert report.upstream_failures == 0 and len(model.requests) == statuses.count(200)


def test_the_log_line_is_reserved_before_the_model_is_called(tmp_path):
    model = ScriptedModel(["ok"])
    with Gateway(
        every_role(model), exchanges_dir=tmp_path, limits=GatewayLimits(bytes_per_token=1)
    ) as gateway:
        # 3,000 bytes: the request fits, its record not
        job = gateway.open_job("j", "n", "solve", token_budget=3_000)
        status, body = _raw_post(job.socket_path, _padded(200, "x" * 1_500))
    assert status == 403 and body["error"]["code"] == "byte_budget_exceeded"
    assert model.requests == [] and not (tmp_path / "job-j.jsonl").exists()


def test_bytes_in_flight_are_capped_per_job():
    limits = GatewayLimits(in_flight_bytes=250_000)
    with Gateway(every_role(GreedyModel(delay_s=0.5)), limits=limits) as gateway:
        job = gateway.open_job("j", "n", "solve", token_budget=10_000_000)
        results: list[int] = []
        threads = [
            threading.Thread(target=lambda: results.append(_raw_post(job.socket_path, _padded(100_000))[0]))
            for _ in range(4)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        report = gateway.close_job("j")
    assert sorted(results) == [200, 200, 429, 429] and report.upstream_failures == 0


def _send(path, data: bytes) -> bytes:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
        client.settimeout(10)
        client.connect(str(path))
        try:
            client.sendall(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the gateway closed the connection before taking all of it
        reply = b""
        while chunk := client.recv(65536):
            reply += chunk
        return reply


def test_a_header_flood_and_an_over_long_request_line_are_cut_at_the_header_cap():
    with Gateway(every_role(ScriptedModel(["ok"]))) as gateway:
        job = gateway.open_job("j", "n", "solve", token_budget=10_000)
        flood = (
            b"POST /v1/chat/completions HTTP/1.1\r\n"
            + b"".join(f"X-Pad-{i}: {'a' * 1000}\r\n".encode() for i in range(60))
            + b"\r\n"
        )
        long_line = b"GET /" + b"a" * 40_000 + b" HTTP/1.1\r\n\r\n"
        answers = [_send(job.socket_path, flood), _send(job.socket_path, long_line)]
        honest, _ = _raw_post(job.socket_path, _padded(10))
    assert all(answer.startswith(b"HTTP/1.1 431") for answer in answers), answers
    assert honest == 200


def test_a_body_over_the_cap_is_refused_unread():
    with Gateway(every_role(ScriptedModel(["ok"])), limits=GatewayLimits(max_request_bytes=1_000)) as gateway:
        job = gateway.open_job("j", "n", "solve", token_budget=10_000)
        answer = _send(job.socket_path, b"POST /v1/chat/completions HTTP/1.1\r\nContent-Length: 2000\r\n\r\n")
        used = gateway._jobs["j"].bytes.used
    assert answer.startswith(b"HTTP/1.1 413") and used == 0
