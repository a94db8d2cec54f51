"""What a Docker sandbox is made of, as plain values: the container's options and the exec wrapper.

Pure functions, so the security-relevant settings are unit-tested without an engine.
"""

from __future__ import annotations

import math
import posixpath
import re
import uuid
from pathlib import Path
from typing import Any

from docker.types import Mount
from docker.utils import parse_bytes

from evolve.sandbox.owner import OWNER_LABEL, current_owner
from evolve.sandbox.types import GATEWAY_SOCKET_PATH, JOB_LABEL, RUN_LABEL, SandboxLimits

AGENT_UID = 1000

FILES_SHARE = 0.75
"""The most of a sandbox's memory its files may hold, its writable mounts together. Files in tmpfs are
charged to the container's memory and no kill frees them: past that, its processes (the engine's reads of
the diff among them) would have nothing left, and the kernel's OOM killer would take whatever remains, the
container's main process included. Agent code could then turn a failure into a dead sandbox, an engine
failure (`infra`) that never counts. Within it, a full disk is the agent's own error, said as such."""

# Runs every command: records its pid (= its process group, which `timeout` leads), enters the
# directory, feeds stdin from a file or /dev/null, and execs `timeout -k GRACE LIMIT CMD...`.
_WRAPPER = (
    'p=$0; i=$1; d=$2; t=$3; g=$4; shift 4; echo $$ > "$p"; '
    'cd "$d" 2>/dev/null || { echo "no such directory: $d" >&2; exit 126; }; '
    'if [ -n "$i" ]; then exec 0<"$i"; rm -f "$i"; else exec 0</dev/null; fi; '
    'exec timeout -k "$g" "$t" "$@"'
)


def lease_command(seconds: int) -> list[str]:
    """The container's main process: it reads its stdin, which only the engine's attached connection
    holds open (`stdin_once`: closed with that connection, when its owner closes the sandbox or dies),
    and ends at that end of input or after `seconds`, whichever comes first. It is root's and reads a
    pipe of the engine's, so agent code (uid 1000, no capabilities) can neither feed it nor stop it."""
    return ["timeout", str(seconds), "cat"]


def container_name(run_id: str, job_id: str) -> str:
    slug = re.sub(r"[^a-zA-Z0-9_.-]+", "-", f"{run_id}-{job_id}")[:80]
    return f"evolve-{slug}-{uuid.uuid4().hex[:6]}"


def idle_allowance_s(limits: SandboxLimits) -> float:
    """How long a container may wait, started ahead of need (evolve.sandbox.pool), before its job takes
    it: its own clock (`sleep`) runs this much past the wall clock, and the host's deadline, set when a
    job takes it, comes first. Fresh containers get the same, so a pooled one looks the same."""
    return min(60.0, 0.1 * limits.wall_clock_s)


def home_of(user: str) -> str:
    return "/root" if user in ("root", "0") else f"/home/{user}"


def mount_sizes(limits: SandboxLimits, *, user: str, workdir: str) -> dict[str, int]:
    """The writable mounts of a read-only sandbox and their sizes in bytes: the work dir half of what its
    files may hold (`FILES_SHARE` of `memory`), /tmp, /var/tmp and the home a third of the rest each, and
    none more than `disk`; none when `disk` is None (the root stays writable)."""
    if limits.disk is None:
        return {}
    disk, files = int(parse_bytes(limits.disk)), int(parse_bytes(limits.memory) * FILES_SHARE)
    work = min(disk, files // 2)
    rest = min(disk, (files - work) // 3)
    return {workdir: work, "/tmp": rest, "/var/tmp": rest, home_of(user): rest}


def writable_mounts(limits: SandboxLimits, *, user: str, workdir: str) -> dict[str, str]:
    """tmpfs mounts (path -> options) of a read-only sandbox: the places agents, graders and compilers
    write, sized by `mount_sizes`; none when `disk` is None (the root stays writable)."""
    sizes = mount_sizes(limits, user=user, workdir=workdir)
    if not sizes:
        return {}
    owner = f"uid={AGENT_UID},gid={AGENT_UID}"
    home_owner = "uid=0,gid=0" if home_of(user) == "/root" else owner
    modes = {workdir: f"{owner},mode=0755", "/tmp": "mode=1777", "/var/tmp": "mode=1777"}
    return {
        place: f"size={size},exec,nosuid,nodev,{modes.get(place, f'{home_owner},mode=0755')}"
        for place, size in sizes.items()
    }


def container_options(
    *,
    run_id: str,
    job_id: str,
    limits: SandboxLimits,
    user: str,
    workdir: str,
    gateway_socket: Path | None,
    cap_add: tuple[str, ...] = (),
    gateway_dir: Path | None = None,
) -> dict[str, Any]:
    """Keyword arguments of `containers.create` (after the image): limits, labels, no network.

    The main process (`lease_command`) ends at the wall clock or as soon as its owner's lease ends, and
    the container with it.
    The gateway's socket, when given, is the only host path mounted and the only way out: either the
    socket file itself, or (`gateway_dir`) a directory of this container's own, mounted read-only, into
    which the engine links the job's socket when the job takes the container. With a
    `disk` limit the root filesystem is read-only and only the tmpfs mounts of `writable_mounts` take
    writes, so a sandbox cannot fill the host's disk.
    """
    environment: dict[str, str] = {}
    mounts: list[Mount] = []
    if gateway_dir is not None:
        mounts.append(
            Mount(posixpath.dirname(GATEWAY_SOCKET_PATH), str(gateway_dir), type="bind", read_only=True)
        )
        environment["EVOLVE_LLM_SOCKET"] = GATEWAY_SOCKET_PATH
    elif gateway_socket is not None:
        mounts.append(Mount(GATEWAY_SOCKET_PATH, str(gateway_socket), type="bind"))
        environment["EVOLVE_LLM_SOCKET"] = GATEWAY_SOCKET_PATH
    return {
        "command": lease_command(math.ceil(limits.wall_clock_s + idle_allowance_s(limits))),
        # The lease (evolve.sandbox.docker_start): the engine holds the main process's stdin open; docker-py
        # creates a container with an open stdin as `StdinOnce`, closed when the attached connection closes.
        "stdin_open": True,
        "name": container_name(run_id, job_id),
        "labels": {RUN_LABEL: run_id, JOB_LABEL: job_id, OWNER_LABEL: current_owner()},
        "environment": environment,
        "mounts": mounts,
        # The main process (`sleep`, no capabilities) is root's, so agent code running as `user` cannot
        # kill it and take the container (and its tmpfs work dir) down; every exec names its user.
        "user": "0:0",
        "working_dir": workdir,
        "init": True,
        "network_mode": "none",
        "nano_cpus": int(limits.cpus * 1e9),
        "mem_limit": limits.memory,
        "memswap_limit": limits.memory,
        "pids_limit": limits.pids,
        "cap_drop": ["ALL"],
        # only a grader's root gets any: to run the tests as uid 1000 (evolve.sandbox.factory)
        "cap_add": list(cap_add),
        "security_opt": ["no-new-privileges"],
        "read_only": limits.disk is not None,
        "tmpfs": writable_mounts(limits, user=user, workdir=workdir),
    }


def exec_wrapper(
    cmd: list[str], *, pidfile: str, stdin_file: str, cwd: str, limit_s: float, grace_s: float
) -> list[str]:
    """The argument list `docker exec` runs for `cmd`."""
    return ["sh", "-c", _WRAPPER, pidfile, stdin_file, cwd, f"{limit_s:.3f}", f"{grace_s:g}", *cmd]
