"""What a Docker sandbox must stop, each asserted on the outcome (docs/design.md §Security)."""

from __future__ import annotations

import http.server
import os
import socket
import socketserver
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import pytest

from evolve.sandbox import GATEWAY_SOCKET_PATH, SandboxLimits
from evolve.sandbox.types import SandboxUnavailable

_VIRTUAL_FILESYSTEMS = {"overlay", "proc", "sysfs", "tmpfs", "devpts", "mqueue", "cgroup", "cgroup2"}
_DOCKER_OWN_FILES = {
    "/etc/resolv.conf",
    "/etc/hostname",
    "/etc/hosts",
    "/sbin/docker-init",
    "/usr/sbin/docker-init",
}
"""What docker itself bind-mounts into every container; nothing else of the host's disks may appear."""

CONNECT = """
import socket, sys
for host in sys.argv[2:]:
    try:
        socket.create_connection((host, int(sys.argv[1])), timeout=2).close()
        print("CONNECTED", host)
    except OSError as exc:
        print("refused", host, type(exc).__name__)
"""


def _host_addresses(docker_client) -> list[str]:
    """Every address of the host a container could try: the bridge gateway, the outward IP, loopback."""
    addresses = {"127.0.0.1"}
    for config in docker_client.networks.get("bridge").attrs["IPAM"]["Config"]:
        if config.get("Gateway"):
            addresses.add(config["Gateway"])
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        probe.connect(("10.255.255.255", 1))  # no packet is sent; this picks the outward interface
        addresses.add(probe.getsockname()[0])
    except OSError:
        pass  # no route at all: the other addresses still get tried
    finally:
        probe.close()
    return sorted(addresses)


@pytest.fixture
def host_listener():
    """A TCP server on the host's 0.0.0.0 that counts the connections it accepts."""
    server = socket.socket()
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("0.0.0.0", 0))
    server.listen()
    server.settimeout(0.2)
    accepted: list[object] = []
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                connection, peer = server.accept()
            except TimeoutError:
                continue
            accepted.append(peer)
            connection.close()

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield server.getsockname()[1], accepted
    stop.set()
    thread.join()
    server.close()


class _UnixHTTPServer(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True


class _Hello(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = b"gateway says hello"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        return  # keep test output quiet

    def address_string(self) -> str:
        return "unix"


@pytest.fixture
def gateway_socket():
    """An HTTP server on a world-writable host Unix socket, as the model gateway provides one."""
    directory = Path(tempfile.mkdtemp(prefix="evgw-"))
    path = directory / "llm.sock"
    server = _UnixHTTPServer(str(path), _Hello)
    path.chmod(0o666)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield path
    server.shutdown()
    server.server_close()
    path.unlink(missing_ok=True)
    directory.rmdir()


def test_fork_bomb_is_stopped_by_the_pids_limit_and_the_host_stays_responsive(make_docker):
    box = make_docker(limits=SandboxLimits(cpus=0.5, memory="128m", pids=48, wall_clock_s=120))
    latencies: list[float] = []
    result_holder = []
    bomb = threading.Thread(
        target=lambda: result_holder.append(
            box.exec(["bash", "-c", "f(){ f | f & }; f; sleep 30"], timeout=4)
        )
    )
    bomb.start()
    while bomb.is_alive():
        started = time.monotonic()
        subprocess.run(["true"], check=True)
        latencies.append(time.monotonic() - started)
        time.sleep(0.2)
    bomb.join()
    (result,) = result_holder
    assert result.timed_out
    assert "Resource temporarily unavailable" in result.stderr  # fork() failed at the pids limit
    assert max(latencies) < 1.0, f"host stalled: {max(latencies):.2f}s"
    pids_max = box.exec(["sh", "-c", "cat /sys/fs/cgroup/pids/pids.max || cat /sys/fs/cgroup/pids.max"])
    assert pids_max.stdout.strip() == "48"
    after = box.exec(["sh", "-c", "ps -e --no-headers | wc -l"])
    assert int(after.stdout) < 10  # the bomb is gone, the sandbox usable again


def test_memory_past_the_limit_is_an_out_of_memory_result(make_docker):
    box = make_docker(limits=SandboxLimits(cpus=0.5, memory="64m", pids=64, wall_clock_s=120))
    result = box.exec(["python3", "-c", "b = bytearray(400 * 2**20); print('survived')"], timeout=30)
    assert result.oom_killed and result.returncode == 137 and not result.timed_out
    assert "survived" not in result.stdout
    assert box.exec(["python3", "-c", "b = bytearray(8 * 2**20); print('fine')"]).stdout == "fine\n"


def test_infinite_loop_is_killed_at_the_timeout_with_partial_output(make_docker):
    box = make_docker()
    script = "print('partial', flush=True)\nwhile True:\n    pass"
    started = time.monotonic()
    result = box.exec(["python3", "-c", script], timeout=1.5)
    assert result.timed_out and result.stdout == "partial\n"
    assert 1.5 <= time.monotonic() - started < 6
    assert "python3" not in box.exec(["ps", "-eo", "comm"]).stdout


def test_wall_clock_kills_the_sandbox(make_docker):
    box = make_docker(limits=SandboxLimits(cpus=0.5, memory="64m", pids=64, wall_clock_s=2))
    started = time.monotonic()
    assert box.exec(["sleep", "30"]).timed_out
    assert time.monotonic() - started < 8
    assert box.exec(["true"]).timed_out  # nothing runs after the wall clock


def test_a_container_that_stopped_is_a_failure_that_says_how_it_ended(make_docker, docker_client):
    box = make_docker(limits=SandboxLimits(cpus=0.5, memory="64m", pids=64, wall_clock_s=60))
    container = docker_client.containers.get(box.container_id)
    container.kill()
    deadline = time.monotonic() + 20
    while container.status != "exited" and time.monotonic() < deadline:
        time.sleep(0.1)
        container.reload()
    with pytest.raises(
        SandboxUnavailable, match="the container: Status 'exited', ExitCode 137, OOMKilled False"
    ):
        box.exec(["true"])


def test_no_tcp_to_the_host_nor_outside(make_docker, docker_client, host_listener):
    port, accepted = host_listener
    hosts = _host_addresses(docker_client)
    socket.create_connection(("127.0.0.1", port), timeout=2).close()  # the listener does accept...
    deadline = time.monotonic() + 2
    while not accepted and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(accepted) == 1
    box = make_docker()
    inside = box.exec(["python3", "-c", CONNECT, str(port), *hosts], timeout=30)
    assert inside.returncode == 0 and "CONNECTED" not in inside.stdout
    assert inside.stdout.count("refused") == len(hosts)
    outside = box.exec(["python3", "-c", CONNECT, "53", "1.1.1.1", "8.8.8.8"], timeout=30)
    assert "CONNECTED" not in outside.stdout and outside.stdout.count("refused") == 2
    time.sleep(0.3)
    assert len(accepted) == 1  # ...but nothing from inside the sandbox reached it


def test_gateway_socket_is_the_only_channel(make_docker, gateway_socket, docker_client, host_listener):
    port, accepted = host_listener
    box = make_docker(gateway_socket=gateway_socket)
    assert box.exec(["sh", "-c", 'echo "$EVOLVE_LLM_SOCKET"']).stdout.strip() == GATEWAY_SOCKET_PATH
    request = (
        "import http.client, os, socket\n"
        "c = http.client.HTTPConnection('gateway')\n"
        "c.sock = socket.socket(socket.AF_UNIX); c.sock.connect(os.environ['EVOLVE_LLM_SOCKET'])\n"
        "c.request('GET', '/v1/models'); r = c.getresponse(); print(r.status, r.read().decode())\n"
    )
    reply = box.exec(["python3", "-c", request], timeout=30)
    assert reply.stdout == "200 gateway says hello\n", reply.stderr
    hosts = _host_addresses(docker_client)
    tcp = box.exec(["python3", "-c", CONNECT, str(port), *hosts], timeout=30)
    assert "CONNECTED" not in tcp.stdout and tcp.stdout.count("refused") == len(hosts)
    assert accepted == []


def test_no_host_secrets_in_the_environment(make_docker, monkeypatch):
    monkeypatch.setenv("EVOLVE_TEST_API_KEY", "sk-must-not-leak")
    monkeypatch.setenv("EVOLVE_TEST_TOKEN", "tok-must-not-leak")
    box = make_docker()
    env = box.exec(["env"]).stdout
    names = {line.split("=", 1)[0] for line in env.splitlines() if "=" in line}
    secret_names = {
        name for name in os.environ if any(word in name.upper() for word in ("KEY", "TOKEN", "SECRET"))
    }
    assert secret_names  # the test itself set some, so the check below could fail
    assert names.isdisjoint(secret_names)
    assert "must-not-leak" not in env


def test_host_files_outside_the_work_dir_are_not_visible(make_docker, tmp_path):
    marker = tmp_path / "host-only-marker.txt"
    marker.write_text("host secret")
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "visible.txt").write_text("copied in")
    box = make_docker()
    box.put_dir(repo, "repo")
    assert box.exec(["test", "-e", str(marker)]).returncode == 1
    assert box.exec(["test", "-e", str(Path.cwd() / "pyproject.toml")]).returncode == 1
    assert box.exec(["find", ".", "-type", "f"]).stdout.split() == ["./repo/visible.txt"]
    mounts = box.exec(["cat", "/proc/self/mountinfo"]).stdout.splitlines()
    from_host_disks = {
        line.split()[4] for line in mounts if line.split(" - ", 1)[1].split()[0] not in _VIRTUAL_FILESYSTEMS
    }
    assert from_host_disks <= _DOCKER_OWN_FILES, from_host_disks
