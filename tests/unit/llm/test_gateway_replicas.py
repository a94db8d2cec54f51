"""The gateway over three stand-in model servers, one killed mid-test: every request answered once."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections import Counter

from evolve.llm.balancer import LeastLoaded
from evolve.llm.client import OpenAICompatible, RetryPolicy
from evolve.llm.exchanges import exchanges_file, read_exchanges
from evolve.llm.gateway import Gateway

REQUESTS, CLIENTS = 60, 12


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _start_replica(port: int) -> subprocess.Popen:
    process = subprocess.Popen(
        [sys.executable, "-m", "evolve.standins.models", "--port", str(port), "--delay", "0.1"]
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=1).close()
            return process
        except OSError:
            time.sleep(0.05)
    process.kill()
    raise AssertionError(f"the stand-in replica on port {port} never answered")


def _post(url: str, token: str, body: dict) -> tuple[int, dict]:
    request = urllib.request.Request(
        url + "/chat/completions",
        data=json.dumps(body).encode(),
        method="POST",
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=60) as reply:
            return reply.status, json.loads(reply.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def test_three_replicas_one_killed_midway_every_request_answered_once(tmp_path):
    ports = [_free_port() for _ in range(3)]
    replicas = [_start_replica(port) for port in ports]
    try:
        clients = [
            OpenAICompatible(f"http://127.0.0.1:{p}/v1", "fake", retry=RetryPolicy(attempts=1), timeout_s=10)
            for p in ports
        ]
        balancer = LeastLoaded(clients, max_in_flight=4)
        answers: list[tuple[int, int, dict]] = []
        lock = threading.Lock()
        with Gateway({"solve": balancer}, exchanges_dir=tmp_path / "exchanges") as gateway:
            url = gateway.start_tcp()
            channels = [gateway.open_job(f"job-{c}", "n", "solve", 10**9) for c in range(CLIENTS)]

            def client(index: int) -> None:
                for number in range(index, REQUESTS, CLIENTS):
                    body = {"messages": [{"role": "user", "content": f"request {number}"}]}
                    status, reply = _post(url, channels[index].token, body)
                    with lock:
                        answers.append((number, status, reply))

            threads = [threading.Thread(target=client, args=(c,)) for c in range(CLIENTS)]
            for thread in threads:
                thread.start()
            while len(answers) < REQUESTS // 3:
                time.sleep(0.01)
            served_before_kill = len(answers)
            replicas[1].send_signal(signal.SIGKILL)  # requests in flight on it are cut off
            for thread in threads:
                thread.join(120)
            jobs = [channel.job_id for channel in channels]
        assert served_before_kill < REQUESTS
        assert sorted(number for number, _, _ in answers) == list(range(REQUESTS))  # each answered once
        failed = [(number, status, reply) for number, status, reply in answers if status != 200]
        assert not failed, failed[:3]
        assert all(reply["choices"][0]["message"]["content"] == "ok" for _, _, reply in answers)
        recorded = [e for job in jobs for e in read_exchanges(exchanges_file(tmp_path / "exchanges", job))]
        assert len(recorded) == REQUESTS
        assert Counter(e.request.messages[0].content for e in recorded) == Counter(
            f"request {n}" for n in range(REQUESTS)
        )
        health = balancer.health()
        assert not health[1].healthy and health[1].failures >= 1
        assert health[0].healthy and health[2].healthy
        assert health[0].served + health[2].served > REQUESTS - served_before_kill - 1
        assert sum(s.served for s in health) == REQUESTS
    finally:
        for process in replicas:
            process.kill()
            process.wait(10)
