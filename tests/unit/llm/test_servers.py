"""Server lifecycles against stand-in executables (no GPU, no weights needed)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from evolve.config import ModelConfig, ModelsConfig
from evolve.llm.balancer import LeastLoaded
from evolve.llm.servers import ExternalServer, LlamaCppServer, ServerError, VLLMServer, healthy
from evolve.llm.stack import ModelStack, client_for, default_server, embedded_server, gpu_plan
from evolve.llm.threads import ThreadPlan, machine_cores, thread_plan
from evolve.llm.types import ChatRequest, Message
from evolve.standins.models import FakeOpenAIServer


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
    assert "--tool-call-parser" not in command  # Qwen2.5-Coder writes no hermes tags: no server parser
    assert server.replica_gpus == [[4, 5], [6, 7]]
    with pytest.raises(ServerError, match="need 4 GPUs"):
        VLLMServer("m", replicas=2, tensor_parallel=2, gpus=[0, 1])


@pytest.mark.parametrize(
    ("model", "configured", "parser"),
    [
        ("Qwen/Qwen2.5-Coder-32B-Instruct", None, None),
        ("Qwen/Qwen2.5-72B-Instruct", None, "hermes"),
        ("Qwen/Qwen3-Coder-30B-A3B-Instruct", None, "qwen3_coder"),
        ("meta-llama/Llama-3.1-8B-Instruct", None, "llama3_json"),
        ("mistralai/Mistral-7B-Instruct-v0.3", None, "mistral"),
        ("some/unknown-model", None, None),
        ("Qwen/Qwen2.5-Coder-7B-Instruct", "hermes", "hermes"),
        ("Qwen/Qwen2.5-72B-Instruct", "none", None),
    ],
)
def test_the_tool_call_parser_follows_the_model_family_and_the_config(model, configured, parser):
    command = VLLMServer(model, tool_parser=configured).command(8000)
    if parser is None:
        assert "--tool-call-parser" not in command and "--enable-auto-tool-choice" not in command
    else:
        assert command[command.index("--tool-call-parser") + 1] == parser
        assert "--enable-auto-tool-choice" in command


def test_vllm_options_reach_the_command_line_and_the_client():
    config = ModelConfig(
        provider="vllm",
        model="Qwen/Qwen2.5-72B-Instruct",
        max_model_len=32768,
        served_model_name="qwen",
        extra_args=("--enforce-eager",),
        startup_timeout_s=90,
    )
    server = default_server(config)
    command = server.command(8000)
    assert command[command.index("--max-model-len") + 1] == "32768"
    assert command[command.index("--served-model-name") + 1] == "qwen"
    assert command[-1] == "--enforce-eager" and server.startup_timeout_s == 90
    assert client_for(config, ("http://127.0.0.1:1/v1",)).name == "qwen"  # requests use the served name


def test_two_vllm_roles_with_different_models_get_different_gpus():
    a = ModelConfig(provider="vllm", model="model-a", tensor_parallel=2)
    b = ModelConfig(provider="vllm", model="model-b")
    pinned = ModelConfig(provider="vllm", model="model-c", gpus=(0,))
    plan = gpu_plan(ModelsConfig(diagnose=a, modify=a, solve=b))
    assert plan["diagnose"].gpus == plan["modify"].gpus == (0, 1) and plan["solve"].gpus == (2,)
    plan = gpu_plan(ModelsConfig(diagnose=pinned, modify=b, solve=ModelConfig(provider="scripted")))
    assert plan["diagnose"].gpus == (0,) and plan["modify"].gpus == (1,) and plan["solve"].gpus is None


def test_vllm_replicas_start_healthy_on_their_gpus_and_stop(tmp_path):
    record = tmp_path / "argv.txt"
    script = _stand_in(
        tmp_path,
        f'echo "$CUDA_VISIBLE_DEVICES $*" >> {record}\nexec {sys.executable} -m evolve.standins.models "$@"',
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


def test_the_embedded_command_runs_evolves_server_with_the_thread_plan(tmp_path):
    plan = ThreadPlan(threads=1, threads_batch=2, reason="test")
    command = LlamaCppServer(threads=plan, prompt_cache_mb=300).command(tmp_path / "m.gguf", 9000)
    assert command[1:3] == ["-m", "evolve.llm.llama_serve"]
    assert command[command.index("--model") + 1] == str(tmp_path / "m.gguf")
    assert command[command.index("--threads") + 1] == "1"
    assert command[command.index("--threads-batch") + 1] == "2"
    assert command[command.index("--prompt-cache-mb") + 1] == "300"


def test_the_embedded_server_takes_the_cores_the_run_leaves_and_the_configured_threads():
    assert (
        embedded_server(ModelConfig(), beside_cpus=0).threads.threads == thread_plan(machine_cores()).threads
    )
    configured = embedded_server(ModelConfig(threads=3, threads_batch=5, prompt_cache_mb=0), beside_cpus=4)
    assert (configured.threads.threads, configured.threads.threads_batch, configured.prompt_cache_mb) == (
        3,
        5,
        0,
    )


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

        def factory(config: ModelConfig, beside_cpus: float) -> StubServer:
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


def test_roles_on_two_embedded_models_get_one_server_each():
    with FakeOpenAIServer() as fake:
        made: list[StubServer] = []

        def factory(config: ModelConfig, beside_cpus: float) -> StubServer:
            made.append(StubServer(fake.base_url, config.model, config.replicas))
            return made[-1]

        meta = ModelConfig(model="qwen2.5-coder-1.5b-instruct")
        with ModelStack(ModelsConfig(diagnose=meta, modify=meta), server_factory=factory):
            assert [s.model for s in made] == ["qwen2.5-coder-1.5b-instruct", "qwen2.5-coder-0.5b-instruct"]


def test_the_embedded_server_serves_the_configured_model():
    from evolve.models.catalog import QWEN_CODER_15B

    server = default_server(ModelConfig(model=QWEN_CODER_15B.name))
    assert isinstance(server, LlamaCppServer) and server.spec is QWEN_CODER_15B
    command = server.command(Path("/m.gguf"), 9000)
    assert command[command.index("--alias") + 1] == QWEN_CODER_15B.name


def test_the_embedded_model_waits_longer_per_attempt_than_other_local_servers():
    # one request at a time on a CPU: the timeout covers the wait behind another job's request
    from evolve.models.capabilities import EMBEDDED_TIMEOUT_S

    embedded = client_for(ModelConfig(provider="embedded"), ("http://127.0.0.1:9/v1",))
    vllm = client_for(ModelConfig(provider="vllm", model="big"), ("http://127.0.0.1:9/v1",))
    assert embedded.timeout_s == EMBEDDED_TIMEOUT_S > vllm.timeout_s == 120.0
    assert (
        client_for(ModelConfig(provider="embedded", timeout_s=30), ("http://127.0.0.1:9/v1",)).timeout_s == 30
    )
