"""Server lifecycles against stand-in executables (no GPU, no weights needed)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from evolve.config import ModelConfig, ModelsConfig
from evolve.llm.balancer import LeastLoaded
from evolve.llm.fake import FakeOpenAIServer
from evolve.llm.servers import ExternalServer, LlamaCppServer, ServerError, VLLMServer, healthy
from evolve.llm.stack import ModelStack
from evolve.llm.types import ChatRequest, Message


def _stand_in(tmp_path: Path, body: str) -> Path:
    script = tmp_path / "vllm"
    script.write_text(f"#!/bin/sh\n{body}\n")
    script.chmod(0o755)
    return script


def test_vllm_command_line_and_gpu_assignment():
    server = VLLMServer(
        "Qwen/Qwen2.5-Coder-32B-Instruct",
        replicas=2,
        tensor_parallel=2,
        gpu_memory_fraction=0.85,
        gpus=[4, 5, 6, 7],
    )
    command = server.command(8001)
    assert command[:3] == ["vllm", "serve", "Qwen/Qwen2.5-Coder-32B-Instruct"]
    for flag, value in [
        ("--port", "8001"),
        ("--tensor-parallel-size", "2"),
        ("--gpu-memory-utilization", "0.85"),
    ]:
        assert command[command.index(flag) + 1] == value
    assert "--enable-auto-tool-choice" in command
    assert server.replica_gpus == [[4, 5], [6, 7]]
    with pytest.raises(ServerError, match="need 4 GPUs"):
        VLLMServer("m", replicas=2, tensor_parallel=2, gpus=[0, 1])


def test_vllm_replicas_start_healthy_on_their_gpus_and_stop(tmp_path):
    record = tmp_path / "argv.txt"
    script = _stand_in(
        tmp_path,
        f'echo "$CUDA_VISIBLE_DEVICES $*" >> {record}\nexec {sys.executable} -m evolve.llm.fake "$@"',
    )
    env_path = os.environ.get("PYTHONPATH", "")
    os.environ["PYTHONPATH"] = f"{Path(__file__).resolve().parents[3]}:{env_path}"
    try:
        server = VLLMServer(
            "m", replicas=2, gpus=[0, 1], executable=[str(script)], log_dir=tmp_path, startup_timeout_s=60
        )
        with server:
            urls = server.base_urls
            assert len(urls) == 2 and all(healthy(url) for url in urls)
        assert not any(healthy(url, timeout_s=0.5) for url in urls)
    finally:
        os.environ["PYTHONPATH"] = env_path
    lines = sorted(record.read_text().splitlines())
    assert [line.split()[:3] for line in lines] == [["0", "serve", "m"], ["1", "serve", "m"]]


def test_a_server_that_dies_at_start_is_an_error_with_its_log(tmp_path):
    script = _stand_in(tmp_path, "echo 'CUDA out of memory' >&2\nexit 3")
    server = VLLMServer("m", executable=[str(script)], log_dir=tmp_path, startup_timeout_s=30)
    with pytest.raises(ServerError, match="CUDA out of memory"):
        server.start()


def test_external_server_is_checked_for_health():
    with FakeOpenAIServer() as fake:
        with ExternalServer(fake.base_url) as server:
            assert server.base_urls == (fake.base_url,)
        dead = fake.base_url
    with pytest.raises(ServerError, match="no OpenAI-style server"):
        ExternalServer(dead).start()


def test_llama_cpp_command_serves_the_model_without_the_state_cache(tmp_path):
    command = LlamaCppServer(threads=2).command(tmp_path / "m.gguf", 9000)
    assert command[1:3] == ["-m", "llama_cpp.server"]
    assert command[command.index("--model") + 1] == str(tmp_path / "m.gguf")
    assert "--cache" not in command  # the RAM state cache grew without bound (see the command's docstring)
    assert command[command.index("--n_threads") + 1] == "2"


class StubServer:
    """Stands for a local server: `replicas` copies of one URL; records whether it runs."""

    def __init__(self, url: str, model: str, replicas: int) -> None:
        self.model, self.base_urls, self.running = model, (url,) * replicas, False

    def start(self) -> None:
        self.running = True

    def stop(self) -> None:
        self.running = False


def test_the_stack_shares_one_embedded_server_and_spreads_vllm_replicas():
    with FakeOpenAIServer() as fake:
        made: list[StubServer] = []

        def factory(config: ModelConfig) -> StubServer:
            made.append(StubServer(fake.base_url, config.model, config.replicas))
            return made[-1]

        config = ModelsConfig(solve=ModelConfig(provider="vllm", model="big", replicas=2))
        with ModelStack(config, server_factory=factory) as stack:
            assert isinstance(stack.models["solve"], LeastLoaded)
            assert stack.models["diagnose"] is not stack.models["modify"]
            assert [s.model for s in made] == ["qwen2.5-coder-0.5b-instruct", "big"]
            assert all(s.running for s in made)
            assert (
                stack.models["solve"]
                .complete(ChatRequest(messages=(Message(role="user", content="hi"),)))
                .message.content
                == "ok"
            )
    assert not any(s.running for s in made)
