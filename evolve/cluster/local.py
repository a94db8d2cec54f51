"""A Ray cluster on this machine (a head and worker nodes as separate processes), for tests and benchmarks.

Each node is `ray start --block` in its own process group, so stopping one (or killing it, to stand
for a machine that dies) ends exactly the processes it started and nothing else on the machine.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Self

from evolve.errors import EvolveError

_STARTED = "Ray runtime started."


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@dataclass
class RayNode:
    """One `ray start --block` process group and its log."""

    process: subprocess.Popen
    log: Path

    def alive(self) -> bool:
        return self.process.poll() is None

    def kill(self) -> None:
        """SIGKILL the node's whole process group: a machine that dies, as the cluster sees it."""
        if self.alive():
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(30)

    def stop(self, grace_s: float = 3.0) -> None:
        if self.alive():
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(grace_s)
            except subprocess.TimeoutExpired:
                pass
        try:  # workers the raylet forked stay in the group after `ray start` exits
            os.killpg(self.process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.process.wait(30)


@dataclass
class LocalRayCluster:
    """A head (`head_cpus` CPUs for jobs) and one worker node per entry of `worker_cpus`."""

    head_cpus: float = 1
    worker_cpus: tuple[float, ...] = (1,)
    start_timeout_s: float = 120.0
    address: str = ""
    head: RayNode | None = None
    workers: list[RayNode] = field(default_factory=list)
    _dir: Path | None = None

    def __enter__(self) -> Self:
        if shutil.which("ray") is None:
            raise EvolveError("the `ray` command is missing: pip install 'evolve[distributed]'")
        # short: Ray's socket paths are bounded
        self._dir = Path(tempfile.mkdtemp(prefix="evray-", dir="/tmp"))
        port = _free_port()
        self.address = f"127.0.0.1:{port}"
        try:
            self.head = self._start(
                "head",
                [
                    "--head",
                    f"--port={port}",
                    f"--temp-dir={self._dir}",
                    f"--ray-client-server-port={_free_port()}",
                    "--include-dashboard=false",
                ],
                self.head_cpus,
            )
            for index, cpus in enumerate(self.worker_cpus):
                self.workers.append(self._start(f"worker-{index}", [f"--address={self.address}"], cpus))
        except BaseException:
            self.__exit__()
            raise
        return self

    def _start(self, name: str, args: list[str], cpus: float) -> RayNode:
        assert self._dir is not None
        log = self._dir / f"{name}.log"
        command = [
            "ray",
            "start",
            "--block",
            *args,
            f"--num-cpus={cpus:g}",
            "--node-ip-address=127.0.0.1",
            "--object-store-memory=100000000",
            "--disable-usage-stats",
            f"--dashboard-agent-listen-port={_free_port()}",
        ]
        with log.open("w") as out:
            # No memory monitor: on a shared machine other work's memory would get this cluster's
            # workers killed (OutOfMemoryError) at 95 % use; the kernel's OOM killer still guards.
            env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0", "RAY_memory_monitor_refresh_ms": "0"}
            process = subprocess.Popen(
                command, stdout=out, stderr=subprocess.STDOUT, start_new_session=True, env=env
            )
        node = RayNode(process, log)
        deadline = time.monotonic() + self.start_timeout_s
        while _STARTED not in log.read_text(errors="replace"):
            if not node.alive() or time.monotonic() > deadline:
                node.stop()
                raise EvolveError(
                    f"ray node {name} did not start; its log:\n{log.read_text(errors='replace')[-2000:]}"
                )
            time.sleep(0.2)
        return node

    @property
    def cpus(self) -> float:
        return self.head_cpus + sum(self.worker_cpus)

    def __exit__(self, *exc: object) -> None:
        for node in [*self.workers, *([self.head] if self.head else [])]:
            node.stop()
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)
