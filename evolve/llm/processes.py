"""Server processes: a free port, a health probe, and one managed child process that dies with us."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from pathlib import Path

from evolve.errors import EvolveError


class ServerError(EvolveError):
    """A model server that would not start, died, or does not answer."""


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
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

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
