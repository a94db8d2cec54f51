"""`evolve sandbox exec` leaves no container behind, however it ends; the sweep spares live owners."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from evolve.sandbox.owner import OWNER_LABEL


def _containers_of(docker_client, pid: int) -> list[str]:
    found = docker_client.api.containers(all=True, filters={"label": "evolve.run=cli"})  # no inspect: no race
    return [c["Id"] for c in found if (c.get("Labels") or {}).get(OWNER_LABEL, "").split(":")[1:2] == [str(pid)]]


def _start_exec(docker_client, base_image) -> subprocess.Popen:
    process = subprocess.Popen(
        [sys.executable, "-m", "evolve", "sandbox", "exec", "--image", base_image, "--timeout", "120", "--",
         "sleep", "100"],
        env={**os.environ, "PYTHONPATH": os.getcwd()}, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        # Ctrl-C as at a terminal: a test run started in the background of a script ignores SIGINT, and
        # its children would inherit that (Python installs no KeyboardInterrupt handler then).
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # noqa: PLW1509 - no threads yet in the child
    )
    deadline = time.monotonic() + 60
    while not _containers_of(docker_client, process.pid):
        assert process.poll() is None, process.stderr.read().decode()
        assert time.monotonic() < deadline, "the sandbox never started"
        time.sleep(0.2)
    time.sleep(0.5)  # past create: into the command
    return process


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_stopped_exec_removes_its_container(docker_client, base_image, signum):
    process = _start_exec(docker_client, base_image)
    process.send_signal(signum)
    process.wait(timeout=60)
    assert _containers_of(docker_client, process.pid) == []


def test_a_killed_exec_leaves_a_container_the_next_command_sweeps(docker_client, base_image):
    live = _start_exec(docker_client, base_image)  # a live owner: its container must survive the sweep
    killed = _start_exec(docker_client, base_image)
    killed.kill()
    killed.wait(timeout=30)
    assert _containers_of(docker_client, killed.pid)  # SIGKILL: nothing could run
    swept = subprocess.run([sys.executable, "-m", "evolve", "sandbox", "cleanup"], check=False, capture_output=True,
                           text=True, env={**os.environ, "PYTHONPATH": os.getcwd()}, timeout=120)
    try:
        assert swept.returncode == 0, swept.stderr
        assert _containers_of(docker_client, killed.pid) == []
        kept = _containers_of(docker_client, live.pid)
        assert kept and f"kept {kept[0][:12]}" in swept.stdout
    finally:
        live.terminate()
        live.wait(timeout=60)
    assert _containers_of(docker_client, live.pid) == []
