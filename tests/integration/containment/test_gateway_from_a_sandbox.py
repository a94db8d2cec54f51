"""The gateway's host side, attacked through a job's socket from inside a sandbox."""

from __future__ import annotations

import json
import threading
import time

from evolve.llm.gateway import Gateway
from evolve.standins.models import GreedyModel, ScriptedModel, every_role

from .conftest import host_status

# Runs inside the sandbox: bounded floods of malformed and half-open requests over the job's socket.
FLOOD = (
    r"""
import os, socket, sys
path = os.environ["EVOLVE_LLM_SOCKET"]
def conn():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); s.settimeout(5); s.connect(path); return s
refused = 0
for length in ["-1", "abc", "99999999999", ""] * 50:
    s = conn()
    header = f"Content-Length: {length}\r\n" if length else ""
    try:
        s.sendall(f"POST /v1/chat/completions HTTP/1.1\r\n{header}\r\n".encode())
        s.sendall(b"x" * (1 << 20))  # a body the gateway must never read
    except OSError:
        pass
    try:
        refused += s.recv(64).split(b" ")[1] in (b"400", b"413")
    except (OSError, IndexError):
        pass
    s.close()
held = []
for _ in range(300):  # half-open: a request line, then nothing
    try:
        s = conn(); s.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nContent-Length: 10\r\n\r\n"); """
    r"""held.append(s)
    except OSError:
        pass
print("refused", refused, "held", len(held), flush=True)
import time; time.sleep(3)
"""
)

ASK = (
    r"""
import concurrent.futures, http.client, json, os, socket
class C(http.client.HTTPConnection):
    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); """
    r"""self.sock.connect(os.environ["EVOLVE_LLM_SOCKET"])
def ask(_):
    c = C("localhost", timeout=30)
    c.request("POST", "/v1/chat/completions", json.dumps({"messages": [{"role": "user", "content": "hi"}]}))
    r = c.getresponse(); return r.status
with concurrent.futures.ThreadPoolExecutor(10) as pool:
    print(json.dumps(sorted(pool.map(ask, range(10)))))
"""
)


def test_floods_from_a_sandbox_leave_the_gateway_bounded_and_serving(make_box):
    with Gateway(every_role(ScriptedModel(["fine"]))) as gateway:
        job = gateway.open_job("flood", "n", "solve", token_budget=10_000)
        box = make_box(gateway_socket=job.socket_path)
        box.write_file("flood.py", FLOOD)
        threads0, rss0 = host_status("Threads"), host_status("VmRSS")
        peak = {"threads": threads0, "rss": rss0}
        done = threading.Event()

        def sample() -> None:
            while not done.is_set():
                peak["threads"] = max(peak["threads"], host_status("Threads"))
                peak["rss"] = max(peak["rss"], host_status("VmRSS"))
                time.sleep(0.05)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        flood = box.exec(["python3", "flood.py"], timeout=120)
        done.set()
        sampler.join()
        assert flood.ok, flood.stderr
        refused = int(flood.stdout.split()[1])
        assert refused == 200  # every malformed request answered 400/413, none read
        assert peak["threads"] - threads0 <= 16 + 4  # one listener serves at most 16 connections
        assert peak["rss"] - rss0 < 64 * 1024  # KiB: the 200 MiB sent was never buffered
        box.write_file("ask.py", ASK.replace("range(10)", "range(1)"))
        assert json.loads(box.exec(["python3", "ask.py"]).stdout) == [200]  # still serving


def test_concurrent_requests_from_a_sandbox_never_pass_the_budget(make_box):
    with Gateway(every_role(GreedyModel(delay_s=0.3))) as gateway:
        job = gateway.open_job("budget", "n", "solve", token_budget=300)
        box = make_box(gateway_socket=job.socket_path)
        box.write_file("ask.py", ASK)
        statuses = json.loads(box.exec(["python3", "ask.py"], timeout=120).stdout)
        used = gateway.usage("budget").total_tokens
    assert used <= 300
    assert 200 in statuses and 403 in statuses
