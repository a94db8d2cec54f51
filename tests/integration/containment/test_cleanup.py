"""`evolve sandbox exec` leaves no container behind, however it ends; the sweep spares live owners."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from evolve.sandbox import DockerSandbox
from evolve.sandbox.owner import OWNER_LABEL


def _containers_of(docker_client, pid: int) -> list[str]:
    found = docker_client.api.containers(all=True, filters={"label": "evolve.run=cli"})  # no inspect: no race
    return [
        c["Id"] for c in found if (c.get("Labels") or {}).get(OWNER_LABEL, "").split(":")[1:2] == [str(pid)]
    ]


def _start_exec(docker_client, base_image) -> subprocess.Popen:
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "evolve",
            "sandbox",
            "exec",
            "--image",
            base_image,
            "--timeout",
            "120",
            "--",
            "sleep",
            "100",
        ],
        env={**os.environ, "PYTHONPATH": os.getcwd()},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
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


def _running(docker_client, container_id: str) -> bool:
    return docker_client.api.inspect_container(container_id)["State"]["Running"]


def test_a_killed_execs_container_ends_itself_within_seconds(docker_client, base_image):
    """SIGKILL: nothing of the owner runs, no sweep either; its lease ends with it and the container stops."""
    live = _start_exec(docker_client, base_image)
    killed = _start_exec(docker_client, base_image)
    (container,) = _containers_of(docker_client, killed.pid)
    killed.kill()
    killed.wait(timeout=30)
    died = time.monotonic()
    while _running(docker_client, container):
        assert time.monotonic() - died < 10, "the container outlived its owner by 10 s"
        time.sleep(0.1)
    try:
        assert _running(docker_client, _containers_of(docker_client, live.pid)[0])  # a live owner's runs on
    finally:
        live.terminate()
        live.wait(timeout=60)


def test_agent_code_cannot_hold_the_lease_open(docker_client, base_image):
    """The main process reads the lease; it is root's, so the agent (uid 1000, no capabilities) can neither
    open its stdin nor stop it."""
    script = (
        "for p in /proc/[0-9]*; do [ \"$(awk '/^Uid:/{print $2}' $p/status 2>/dev/null)\" = 0 ] || continue; "
        'echo "root $p"; (exec 3<>"$p/fd/0") 2>/dev/null && echo "held $p"; '
        'kill -KILL "${p#/proc/}" 2>/dev/null && echo "killed $p"; done; true'
    )
    with DockerSandbox.create(base_image, run_id="cli", job_id="lease") as box:
        tried = box.exec(["sh", "-c", script])
        assert tried.ok and "root /proc/" in tried.stdout, tried.stdout + tried.stderr
        assert "held" not in tried.stdout and "killed" not in tried.stdout, tried.stdout
        assert box.exec(["true"]).ok  # the container runs on


def test_a_killed_exec_leaves_a_container_the_next_command_sweeps(docker_client, base_image):
    live = _start_exec(docker_client, base_image)  # a live owner: its container must survive the sweep
    killed = _start_exec(docker_client, base_image)
    killed.kill()
    killed.wait(timeout=30)
    # SIGKILL: nothing could run; the stopped container stays
    assert _containers_of(docker_client, killed.pid)
    swept = subprocess.run(
        [sys.executable, "-m", "evolve", "sandbox", "cleanup"],
        check=False,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": os.getcwd()},
        timeout=120,
    )
    try:
        assert swept.returncode == 0, swept.stderr
        assert _containers_of(docker_client, killed.pid) == []
        kept = _containers_of(docker_client, live.pid)
        assert kept and f"kept {kept[0][:12]}" in swept.stdout
    finally:
        live.terminate()
        live.wait(timeout=60)
    assert _containers_of(docker_client, live.pid) == []
