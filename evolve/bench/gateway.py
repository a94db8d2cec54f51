"""`evolve bench gateway`: the gateway's host cost under one job's worst-case requests.

The real path: a `Gateway` as `evolve run` builds it (its limits, the job's token budget from the config,
the exchange log on disk) serving one job on its Unix socket, forwarding through `OpenAICompatible` to
the stand-in OpenAI server in its own process. A second process plays the agent: `clients` connections
at once, each sending the worst requests the gateway meets (a body at the cap in a million tiny
messages, at the cap in one wide string, in escapes, in whitespace outside strings, at the value cap, at the
depth cap, the largest request the job's tokens admit, lone surrogates and NaN) round after round. This
process's resident memory is sampled throughout; the peak, the log's size and the job's byte ledger are what
it prints.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from evolve.llm.budget import DEFAULT_GATEWAY_LIMITS, GatewayLimits

MIB = 1024 * 1024


@dataclass(frozen=True)
class GatewayBench:
    clients: int
    requests: int
    statuses: dict[int, int]
    baseline_rss_mib: float
    peak_rss_mib: float
    log_bytes: int
    byte_budget: int
    bytes_used: int
    seconds: float

    def to_json(self) -> dict:
        return {
            "clients": self.clients,
            "requests": self.requests,
            "statuses": {str(k): v for k, v in sorted(self.statuses.items())},
            "rss_mib": {"baseline": round(self.baseline_rss_mib, 1), "peak": round(self.peak_rss_mib, 1)},
            "log_bytes": self.log_bytes,
            "byte_budget": self.byte_budget,
            "bytes_used": self.bytes_used,
            "seconds": round(self.seconds, 2),
        }


def worst_requests(cap: int, job_tokens: int) -> list[bytes]:
    """The bodies one agent can make most costly for the gateway's host, each at most `cap` bytes."""
    head = b'{"messages":['
    tiny = b'{"role":"user"}'
    wide = json.dumps(
        {"messages": [{"role": "user", "content": "\U0001f600" + "a" * (cap - 100)}]}, ensure_ascii=False
    ).encode()
    admitted = json.dumps(
        {"messages": [{"role": "user", "content": "b" * max(min(job_tokens // 2, cap) - 200, 1)}]}
    ).encode()
    padded = b'{"messages":[{"role":"user","content":"hi"}]' + b" " * (cap - 60) + b"}"
    numbers = json.dumps(
        {
            "messages": [{"role": "user", "content": "n"}],
            "tools": [
                {"type": "function", "function": {"name": "f", "parameters": {"enum": list(range(60_000))}}}
            ],
        }
    ).encode()
    deep = json.dumps(
        {
            "messages": [{"role": "user", "content": "d"}],
            "tools": [
                {
                    "type": "function",
                    "function": {"name": "f", "parameters": json.loads('{"a":' * 28 + "1" + "}" * 28)},
                }
            ],
        }
    ).encode()
    return [
        head + b",".join([tiny] * ((cap - 20) // (len(tiny) + 1))) + b"]}",
        wide,
        padded,
        numbers,
        deep,
        admitted,
        b'{"messages":[{"role":"user","content":"' + b"\\ud800" * ((cap - 60) // 6) + b'"}]}',
        b'{"messages":[{"role":"user","content":"' + b'\\"' * ((cap - 60) // 2) + b'"}]}',
        b'{"messages":[{"role":"user","content":"x"}],"temperature":NaN}',
    ]


def _post(path: str, body: bytes) -> int:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(120)
        try:
            sock.connect(path)
        except (BlockingIOError, ConnectionRefusedError):
            return 0  # the listener's backlog is full: no answer
        head = (
            f"POST /v1/chat/completions HTTP/1.1\r\nHost: gw\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
        ).encode()
        reply = b""
        try:
            sock.sendall(head + body)
        except (BrokenPipeError, ConnectionResetError):
            pass  # refused before its body was read: the answer is still there to read
        try:
            while chunk := sock.recv(65536):
                reply += chunk
        except ConnectionResetError:
            pass  # closed at accept (the connection cap) or mid-refusal: counted as no answer
    try:
        return int(reply.split(b" ", 2)[1])
    except (IndexError, ValueError):
        return 0  # closed without an answer (the connection cap)


def clients(
    path: str, clients: int, rounds: int, cap: int, job_tokens: int, results: multiprocessing.Queue
) -> None:
    """The agent's side (its own process): `clients` threads, each sending every worst request per round."""
    bodies = worst_requests(cap, job_tokens)
    statuses: list[int] = []
    lock = threading.Lock()

    def one(offset: int) -> None:
        for round_ in range(rounds):
            for index in range(len(bodies)):
                status = _post(path, bodies[(index + offset + round_) % len(bodies)])
                with lock:
                    statuses.append(status)

    threads = [threading.Thread(target=one, args=(n,)) for n in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    results.put(statuses)


def _rss_mib() -> float:
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / MIB


def _reset_peak() -> bool:
    """Start the kernel's peak-RSS mark (VmHWM) afresh; False where the kernel does not allow it."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        return False
    return True


def _kernel_peak_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _standin_server() -> tuple[subprocess.Popen, str]:
    port = _free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "evolve.standins.models", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return server, f"http://127.0.0.1:{port}/v1"
        except OSError:
            time.sleep(0.1)
    server.kill()
    raise RuntimeError("the stand-in model server did not start")


def bench_gateway(
    job_tokens: int, limits: GatewayLimits = DEFAULT_GATEWAY_LIMITS, clients_n: int = 16, rounds: int = 2
) -> GatewayBench:
    """One job's `clients_n` connections sending worst-case requests for `rounds` rounds."""
    from evolve.llm.client import OpenAICompatible
    from evolve.llm.gateway import Gateway

    server, url = _standin_server()
    peak = [0.0]
    stop = threading.Event()

    def sample() -> None:
        while not stop.is_set():
            peak[0] = max(peak[0], _rss_mib())
            time.sleep(0.002)

    try:
        with tempfile.TemporaryDirectory(prefix="evolve-bench-gateway-") as tmp:
            model = OpenAICompatible(url, "fake")
            with Gateway({"solve": model}, exchanges_dir=Path(tmp), limits=limits) as gateway:
                job = gateway.open_job("bench", "node", "solve", job_tokens)
                baseline = _rss_mib()
                kernel_mark = _reset_peak()
                sampler = threading.Thread(target=sample, daemon=True)
                sampler.start()
                results: multiprocessing.Queue = multiprocessing.get_context("spawn").Queue()
                agent = multiprocessing.get_context("spawn").Process(
                    target=clients,
                    args=(
                        str(job.socket_path),
                        clients_n,
                        rounds,
                        limits.max_request_bytes,
                        job_tokens,
                        results,
                    ),
                )
                start = time.monotonic()
                agent.start()
                statuses = results.get(timeout=1800)
                agent.join()
                seconds = time.monotonic() - start
                stop.set()
                sampler.join()
                if kernel_mark:  # the kernel's mark sees a peak between two samples too
                    peak[0] = max(peak[0], _kernel_peak_mib())
                used, budget = gateway.close_job("bench").bytes_taken, job_tokens * limits.bytes_per_token
            log = Path(tmp) / "job-bench.jsonl"
            log_bytes = log.stat().st_size if log.exists() else 0
    finally:
        server.kill()
        server.wait()
    return GatewayBench(
        clients_n, len(statuses), dict(Counter(statuses)), baseline, peak[0], log_bytes, budget, used, seconds
    )
