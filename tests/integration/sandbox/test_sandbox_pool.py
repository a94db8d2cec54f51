"""Containers started ahead of need (evolve.sandbox.pool): each job still gets a fresh one, like
`create`'s."""

from __future__ import annotations

import socket
import tempfile
import threading
import time
from pathlib import Path

import pytest

from evolve.sandbox import JOB_LABEL, DockerSandbox, SandboxLimits, list_sandboxes
from evolve.sandbox.pool import AHEAD_JOB, SandboxPool, SandboxSpec

LIMITS = SandboxLimits(cpus=0.5, memory="128m", pids=64, wall_clock_s=120, output_limit_bytes=100_000)
# What a container is made of, besides its name, its job label and its gateway directory's host path.
_HOST_KEYS = (
    "Memory",
    "MemorySwap",
    "NanoCpus",
    "PidsLimit",
    "CapDrop",
    "CapAdd",
    "SecurityOpt",
    "NetworkMode",
    "ReadonlyRootfs",
    "Tmpfs",
    "Init",
    "Privileged",
)
_CONFIG_KEYS = ("User", "Cmd", "Env", "WorkingDir", "Image")


def _shape(docker_client, box: DockerSandbox) -> dict:
    attrs = docker_client.containers.get(box.container_id).attrs
    labels = {k: v for k, v in attrs["Config"]["Labels"].items() if k != JOB_LABEL}
    mounts = sorted((m["Type"], m["Destination"], m["RW"]) for m in attrs["Mounts"])
    return {
        "host": {k: attrs["HostConfig"].get(k) for k in _HOST_KEYS},
        "config": {k: attrs["Config"].get(k) for k in _CONFIG_KEYS},
        "labels": labels,
        "mounts": mounts,
    }


def _wait_ready(pool: SandboxPool, spec: SandboxSpec) -> None:
    deadline = time.monotonic() + 60
    while not all(w.future.done() for w in pool._waiting.get(spec, ())) and time.monotonic() < deadline:
        time.sleep(0.05)


@pytest.fixture
def gateway_socket():
    """A stand-in for a job's gateway socket: answers each connection with `hello`."""
    with tempfile.TemporaryDirectory(prefix="evolve-test-gw-") as tmp:
        path = Path(tmp) / "job.sock"
        server = socket.socket(socket.AF_UNIX)
        server.bind(str(path))
        path.chmod(0o666)
        server.listen(8)

        def serve() -> None:
            while True:
                try:
                    conn, _ = server.accept()
                except OSError:
                    return  # closed: the test is over
                conn.sendall(b"hello")
                conn.close()

        threading.Thread(target=serve, daemon=True).start()
        yield path
        server.close()


def test_a_pooled_container_is_fresh_and_made_like_a_new_one(
    docker_client, base_image, test_run_id, gateway_socket
):
    spec = SandboxSpec(base_image, test_run_id, LIMITS, gateway=True)
    with SandboxPool() as pool:
        first = pool.sandbox(spec, "job-1", gateway_socket)
        # what a previous job could leave: files in every writable place, a process that outlives it
        first.exec(
            [
                "sh",
                "-c",
                (
                    "echo left > /work/left; echo left > /tmp/left; echo left > ~/left; "
                    "nohup sleep 300 >/dev/null 2>&1 &"
                ),
            ]
        )
        first.close()
        _wait_ready(pool, spec)
        second = pool.sandbox(spec, "job-2", gateway_socket)
        try:
            attrs = docker_client.containers.get(second.container_id).attrs
            assert attrs["Config"]["Labels"][JOB_LABEL] == AHEAD_JOB  # it was started before job-2 asked
            assert "job-2" in attrs["Name"] and second.container_id != first.container_id
            found = second.exec(["sh", "-c", "ls /work /tmp ~; ps -eo args"])
            assert "left" not in found.stdout and "sleep 300" not in found.stdout, found.stdout
            # the image's home
            assert second.exec(["stat", "-c", "%U", "/home/agent/.bashrc"]).stdout.strip() == "agent"
            # its gateway directory holds this job's socket and nothing else, read-only
            talk = second.exec(
                [
                    "python3",
                    "-c",
                    (
                        "import os, socket; s = socket.socket(socket.AF_UNIX); "
                        "s.connect(os.environ['EVOLVE_LLM_SOCKET']); print(s.recv(5).decode(), "
                        "os.listdir('/run/evolve')); open('/run/evolve/x', 'w')"
                    ),
                ]
            )
            assert talk.stdout.split() == ["hello", "['llm.sock']"] and "Read-only" in talk.stderr
            with DockerSandbox.create(
                base_image,
                run_id=test_run_id,
                job_id="job-3",
                limits=LIMITS,
                gateway_socket=gateway_socket,
                client=docker_client,
            ) as fresh:
                assert _shape(docker_client, second) == _shape(docker_client, fresh)
            # the agent user's, as ever
            assert second.exec(["sh", "-c", "kill -9 -1; kill -9 1"]).returncode != 0
        finally:
            second.close()
    assert list_sandboxes(test_run_id, client=docker_client) == []  # used, waiting and removed: none left


def test_a_pooled_grader_gets_its_capabilities_and_no_gateway(docker_client, base_image, test_run_id):
    spec = SandboxSpec(base_image, test_run_id, LIMITS, user="root", cap_add=("SETUID", "SETGID"))
    with SandboxPool() as pool:
        with pool.sandbox(spec, "grade-1") as first:
            first.write_file("/tmp/stage/x", "1")
            assert first.exec(["cat", "/tmp/stage/x"]).stdout == "1"
        _wait_ready(pool, spec)
        with pool.sandbox(spec, "grade-2") as second:
            attrs = docker_client.containers.get(second.container_id).attrs
            assert attrs["HostConfig"]["CapAdd"] == ["CAP_SETUID", "CAP_SETGID"] or attrs["HostConfig"][
                "CapAdd"
            ] == ["SETUID", "SETGID"]
            assert not attrs["Mounts"] or all(m["Type"] == "tmpfs" for m in attrs["Mounts"])
            assert second.exec(["id", "-u"]).stdout.strip() == "0"
            assert second.exec(["ls", "/tmp"]).stdout.strip() == ""
        with pytest.raises(ValueError):
            pool.sandbox(spec, "grade-3", Path("/nonexistent.sock"))  # a gateway the spec has not
    assert list_sandboxes(test_run_id, client=docker_client) == []


def test_jobs_asking_side_by_side_make_the_pool_start_more_ahead(docker_client, base_image, test_run_id):
    spec = SandboxSpec(base_image, test_run_id, LIMITS)
    with SandboxPool(most=2) as pool, pool.sandbox(spec, "job-a"):
        _wait_ready(pool, spec)
        with pool.sandbox(spec, "job-b"), pool.sandbox(spec, "job-c"):
            assert len(pool._waiting[spec]) == 2  # job-c asked before job-b's successor was up
            _wait_ready(pool, spec)
            with pool.sandbox(spec, "job-d"), pool.sandbox(spec, "job-e"), pool.sandbox(spec, "job-f"):
                assert len(pool._waiting[spec]) == 2  # never more than `most`
    assert list_sandboxes(test_run_id, client=docker_client) == []
