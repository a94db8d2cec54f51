"""Local model servers: start, wait for health, stop (also when the engine dies).

`LlamaCppServer` is the embedded CPU default (llama-cpp-python's OpenAI server over the verified
GGUF); `VLLMServer` runs `vllm serve` replicas on GPUs; `ExternalServer` is a URL someone else runs.
All expose `base_urls` (OpenAI `/v1` roots) and are context managers.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Protocol, Self

from evolve.errors import EvolveError
from evolve.llm.embedded import QWEN_CODER_05B, ensure_embedded_model


class ServerError(EvolveError):
    """A model server that would not start, died, or does not answer."""


class ModelServer(Protocol):
    """A running (after `start`) OpenAI-style model server with one or more replicas."""

    model: str

    @property
    def base_urls(self) -> tuple[str, ...]: ...

    def start(self) -> None: ...

    def stop(self) -> None: ...


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port that is free right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((host, 0))
        return probe.getsockname()[1]


def healthy(base_url: str, timeout_s: float = 2.0) -> bool:
    """Whether `GET {base_url}/models` answers 200."""
    try:
        with urllib.request.urlopen(f"{base_url}/models", timeout=timeout_s) as reply:
            return reply.status == 200
    except (urllib.error.URLError, OSError, ValueError):
        return False


def _die_with_parent() -> None:
    # Linux: the child gets SIGTERM if the engine dies without stopping it (no orphaned servers).
    if sys.platform.startswith("linux"):
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


class ManagedProcess:
    """One server process: its own process group, output to a log file, health-checked."""

    def __init__(
        self, command: Sequence[str], base_url: str, log_path: Path, env: Mapping[str, str] | None = None
    ):
        self.command = list(command)
        self.base_url = base_url
        self.log_path = log_path
        self._env = {**os.environ, **(env or {})}
        self._process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        with self.log_path.open("ab") as log:
            try:
                self._process = subprocess.Popen(
                    self.command,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    stdin=subprocess.DEVNULL,
                    env=self._env,
                    start_new_session=True,
                    preexec_fn=_die_with_parent,  # noqa: PLW1509 (only calls prctl, async-signal-safe)
                )
            except OSError as exc:
                raise ServerError(f"cannot start {self.command[0]}: {exc}") from exc

    def _log_tail(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-1500:]
        except OSError:
            return ""

    def wait_healthy(self, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self._process is None or self._process.poll() is not None:
                code = None if self._process is None else self._process.returncode
                raise ServerError(
                    f"{self.command[0]} exited ({code}) before it was healthy:\n{self._log_tail()}"
                )
            if healthy(self.base_url):
                return
            time.sleep(0.5)
        self.stop()
        raise ServerError(f"{self.base_url} not healthy after {timeout_s:.0f}s:\n{self._log_tail()}")

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def stop(self, grace_s: float = 10.0) -> None:
        process, self._process = self._process, None
        if process is None or process.poll() is not None:
            return
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(grace_s)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(grace_s)


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
    """The embedded default: llama-cpp-python's OpenAI server on a free local port, CPU only."""

    def __init__(
        self,
        model_path: Path | None = None,
        *,
        host: str = "127.0.0.1",
        port: int | None = None,
        threads: int | None = None,
        context_tokens: int = 4096,
        startup_timeout_s: float = 180.0,
        log_dir: Path | None = None,
    ) -> None:
        self.model = QWEN_CODER_05B.name
        self.model_path = model_path
        self.host, self.port = host, port
        self.threads = threads or os.cpu_count() or 1
        self.context_tokens = context_tokens
        self.startup_timeout_s = startup_timeout_s
        self.log_dir = log_dir or Path(tempfile.gettempdir())
        self._processes = []

    def command(self, model_path: Path, port: int) -> list[str]:
        """The server command line (prompt caching on, so a growing transcript is not re-read)."""
        return [
            sys.executable,
            "-m",
            "llama_cpp.server",
            "--model",
            str(model_path),
            "--model_alias",
            self.model,
            "--host",
            self.host,
            "--port",
            str(port),
            "--n_ctx",
            str(self.context_tokens),
            "--n_threads",
            str(self.threads),
            "--cache",
            "true",
        ]

    def start(self) -> None:
        try:
            import llama_cpp  # noqa: F401 (only checks that the `local` extra is installed)
        except ImportError as exc:
            raise ServerError(
                "llama-cpp-python is not installed: pip install -e '.[local]' (see .ci/run for a portable build)"
            ) from exc
        model_path = self.model_path or ensure_embedded_model()
        port = self.port or free_port(self.host)
        log = self.log_dir / f"evolve-llama-{port}.log"
        self._launch([ManagedProcess(self.command(model_path, port), f"http://{self.host}:{port}/v1", log)])


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
        self.executable = tuple(executable)
        self.startup_timeout_s = startup_timeout_s
        self.log_dir = log_dir or Path(tempfile.gettempdir())
        self._processes = []

    def command(self, port: int) -> list[str]:
        """One replica's command line; tool calls are parsed server-side (hermes format)."""
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
            "--enable-auto-tool-choice",
            "--tool-call-parser",
            "hermes",
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
