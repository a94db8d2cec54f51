"""Local model servers: start, wait for health, stop (also when the engine dies).

`LlamaCppServer` is the embedded CPU default (evolve's own llama.cpp server over the verified GGUF);
`VLLMServer` runs `vllm serve` replicas on GPUs; `ExternalServer` is a URL someone else runs. All expose
`base_urls` (OpenAI `/v1` roots) and are context managers.
"""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol, Self

from evolve.llm.embedded import ensure_embedded_model
from evolve.llm.processes import ManagedProcess, ServerError, free_port, healthy
from evolve.llm.threads import ThreadPlan, machine_cores, thread_plan
from evolve.models.catalog import QWEN_CODER_05B, EmbeddedModelSpec

PROMPT_CACHE_MB = 400
"""Saved contexts of the embedded server: about 12 KiB per token (Qwen2.5-0.5B, f16 keys and values),
so five improve conversations of 6,000 tokens."""

__all__ = [
    "ExternalServer",
    "LlamaCppServer",
    "ModelServer",
    "ServerError",
    "VLLMServer",
    "free_port",
    "healthy",
]


class ModelServer(Protocol):
    """A running (after `start`) OpenAI-style model server with one or more replicas."""

    model: str

    @property
    def base_urls(self) -> tuple[str, ...]: ...

    def start(self) -> None: ...

    def stop(self) -> None: ...


class _ProcessServer:
    """Shared lifecycle of servers made of managed processes."""

    startup_timeout_s: float
    _processes: list[ManagedProcess]

    @property
    def base_urls(self) -> tuple[str, ...]:
        return tuple(p.base_url for p in self._processes)

    def stop(self) -> None:
        for process in self._processes:
            process.stop()
        self._processes = []

    def _launch(self, processes: list[ManagedProcess]) -> None:
        self._processes = processes
        try:
            for process in processes:
                process.start()
            for process in processes:
                process.wait_healthy(self.startup_timeout_s)
        except BaseException:
            self.stop()
            raise

    def __enter__(self):
        self.start()  # type: ignore[attr-defined]
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


class LlamaCppServer(_ProcessServer):
    """The embedded default: evolve's llama.cpp server (`evolve.llm.llama_serve`) on a free local
    port, CPU only, with the thread plan of `evolve.llm.threads` and saved contexts for interleaved
    conversations."""

    def __init__(
        self,
        model_path: Path | None = None,
        *,
        host: str = "127.0.0.1",
        port: int | None = None,
        threads: ThreadPlan | None = None,
        context_tokens: int = 8192,  # the seed's improve prompt (its whole code) is about 5.5k tokens
        prompt_cache_mb: int = PROMPT_CACHE_MB,
        startup_timeout_s: float = 180.0,
        log_dir: Path | None = None,
        spec: EmbeddedModelSpec = QWEN_CODER_05B,
    ) -> None:
        self.spec = spec
        self.model = spec.name
        self.model_path = model_path
        self.host, self.port = host, port
        self.threads = threads or thread_plan(machine_cores())
        self.context_tokens = context_tokens
        self.prompt_cache_mb = prompt_cache_mb
        self.startup_timeout_s = startup_timeout_s
        self.log_dir = log_dir or Path(tempfile.gettempdir())
        self._processes = []

    def command(self, model_path: Path, port: int) -> list[str]:
        """The server command line (see evolve/llm/llama_serve.py for what it adds to llama.cpp)."""
        return [
            sys.executable,
            "-m",
            "evolve.llm.llama_serve",
            "--model",
            str(model_path),
            "--alias",
            self.model,
            "--host",
            self.host,
            "--port",
            str(port),
            "--n-ctx",
            str(self.context_tokens),
            "--threads",
            str(self.threads.threads),
            "--threads-batch",
            str(self.threads.threads_batch),
            "--prompt-cache-mb",
            str(self.prompt_cache_mb),
        ]

    @property
    def pid(self) -> int | None:
        """The server process's id while it runs (for memory readings)."""
        return self._processes[0].pid if self._processes else None

    def start(self) -> None:
        try:
            import llama_cpp  # noqa: F401 (only checks that the `local` extra is installed)
        except ImportError as exc:
            raise ServerError(
                "llama-cpp-python is not installed: pip install -e '.[local]' (see .ci/run for a portable "
                "build)"
            ) from exc
        model_path = self.model_path or ensure_embedded_model(self.spec)
        port = self.port or free_port(self.host)
        log = self.log_dir / f"evolve-llama-{port}.log"
        # two malloc arenas: each request runs on a new thread, and glibc would give threads up to
        # 8 x cores arenas that keep what they freed
        env = {"MALLOC_ARENA_MAX": "2"}
        self._launch(
            [ManagedProcess(self.command(model_path, port), f"http://{self.host}:{port}/v1", log, env)]
        )


# `--tool-call-parser` by model family, as vLLM's tool-calling docs list them; the first match wins.
# Qwen2.5-Coder gets none: it writes tool calls as JSON in its text, not in hermes <tool_call> tags,
# so the hermes parser returns no calls; the agent reads them from the content instead.
TOOL_CALL_PARSERS: tuple[tuple[str, str | None], ...] = (
    ("qwen2.5-coder", None),
    ("qwen3-coder", "qwen3_coder"),
    ("qwen", "hermes"),
    ("qwq", "hermes"),
    ("hermes", "hermes"),
    ("llama-4", "llama4_pythonic"),
    ("llama-3", "llama3_json"),
    ("llama3", "llama3_json"),
    ("mistral", "mistral"),
    ("mixtral", "mistral"),
    ("granite", "granite"),
    ("deepseek-v3", "deepseek_v3"),
    ("internlm", "internlm"),
)


def tool_call_parser(model: str, configured: str | None = None) -> str | None:
    """The parser for `model`: the configured one ("none" turns parsing off), else by family, else none."""
    if configured is not None:
        return None if configured.lower() == "none" else configured
    name = model.lower().rsplit("/", 1)[-1]
    return next((parser for family, parser in TOOL_CALL_PARSERS if family in name), None)


class VLLMServer(_ProcessServer):
    """`vllm serve MODEL` as one or more replicas, each on its own GPUs and port."""

    def __init__(
        self,
        model: str,
        *,
        replicas: int = 1,
        tensor_parallel: int = 1,
        gpu_memory_fraction: float = 0.9,
        gpus: Sequence[int] | None = None,
        host: str = "127.0.0.1",
        base_port: int | None = None,
        extra_args: Sequence[str] = (),
        executable: Sequence[str] = ("vllm",),
        startup_timeout_s: float = 1200.0,
        log_dir: Path | None = None,
        tool_parser: str | None = None,
        max_model_len: int | None = None,
        served_model_name: str | None = None,
    ) -> None:
        if replicas < 1 or tensor_parallel < 1:
            raise ServerError("vLLM needs replicas >= 1 and tensor_parallel >= 1")
        needed = replicas * tensor_parallel
        gpu_list = list(gpus) if gpus is not None else list(range(needed))
        if len(gpu_list) != needed:
            raise ServerError(
                f"{replicas} replicas x tensor parallel {tensor_parallel} need {needed} GPUs, got {gpu_list}"
            )
        self.model = model
        self.replica_gpus = [
            gpu_list[i * tensor_parallel : (i + 1) * tensor_parallel] for i in range(replicas)
        ]
        self.tensor_parallel = tensor_parallel
        self.gpu_memory_fraction = gpu_memory_fraction
        self.host, self.base_port = host, base_port
        self.extra_args = tuple(extra_args)
        self.tool_parser = tool_call_parser(model, tool_parser)
        self.max_model_len = max_model_len
        self.served_model_name = served_model_name
        self.executable = tuple(executable)
        self.startup_timeout_s = startup_timeout_s
        self.log_dir = log_dir or Path(tempfile.gettempdir())
        self._processes = []

    def command(self, port: int) -> list[str]:
        """One replica's command line; tool calls are parsed server-side by the family's parser."""
        optional: list[str] = []
        if self.tool_parser is not None:
            optional += ["--enable-auto-tool-choice", "--tool-call-parser", self.tool_parser]
        if self.max_model_len is not None:
            optional += ["--max-model-len", str(self.max_model_len)]
        if self.served_model_name is not None:
            optional += ["--served-model-name", self.served_model_name]
        return [
            *self.executable,
            "serve",
            self.model,
            "--host",
            self.host,
            "--port",
            str(port),
            "--tensor-parallel-size",
            str(self.tensor_parallel),
            "--gpu-memory-utilization",
            str(self.gpu_memory_fraction),
            *optional,
            *self.extra_args,
        ]

    def start(self) -> None:
        processes = []
        for index, gpus in enumerate(self.replica_gpus):
            port = self.base_port + index if self.base_port is not None else free_port(self.host)
            env = {"CUDA_VISIBLE_DEVICES": ",".join(str(g) for g in gpus)}
            log = self.log_dir / f"evolve-vllm-{port}.log"
            processes.append(ManagedProcess(self.command(port), f"http://{self.host}:{port}/v1", log, env))
        self._launch(processes)


class ExternalServer:
    """A server the user already runs; `start` only checks that it answers."""

    def __init__(self, base_url: str, model: str = "") -> None:
        self.model = model
        self._base_url = base_url.rstrip("/")

    @property
    def base_urls(self) -> tuple[str, ...]:
        return (self._base_url,)

    def start(self) -> None:
        if not healthy(self._base_url, timeout_s=10.0):
            raise ServerError(f"no OpenAI-style server answers at {self._base_url}/models")

    def stop(self) -> None:
        return

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
