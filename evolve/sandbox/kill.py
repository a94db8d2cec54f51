"""Killing a command's whole process group from the host, even while it forks (fork bombs).

`timeout` in the container sends TERM to its group and then exits with its direct child, so
children that survive TERM would live on. The engine kills what is left of the group from the
host, where a full pids cgroup cannot stop it: every process on this host whose process group is
the command's and whose cgroup is the container's gets SIGKILL, in rounds until none is left.
Where the engine is remote, the host's /proc shows none of them and the caller falls back to a
kill inside the container. The same rounds kill all of one uid's processes in a container (the agent's,
when its writable layer passes its cap: evolve.sandbox.layer).
"""

from __future__ import annotations

import os
import signal
from collections.abc import Callable
from pathlib import Path


def _members(container_id: str, proc: Path, belongs: Callable[[Path], bool]) -> list[int]:
    """Processes of the container (by their cgroup) for which `belongs(/proc/PID)` holds."""
    members = []
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if belongs(entry) and container_id in (entry / "cgroup").read_text(errors="replace"):
                members.append(int(entry.name))
        except (OSError, ValueError, IndexError):
            continue  # the process ended while we looked, or is not ours to read
    return members


def _group_members(pgid: int, container_id: str, proc: Path) -> list[int]:
    def pgrp(entry: Path) -> int:  # fields after the parenthesised command: state, ppid, pgrp, ...
        return int((entry / "stat").read_bytes().rsplit(b")", 1)[1].split()[2])
    return _members(container_id, proc, lambda entry: pgrp(entry) == pgid)


def _uid_members(uid: int, container_id: str, proc: Path) -> list[int]:
    def real_uid(entry: Path) -> int:  # bytes: a process names itself, in any bytes (not always UTF-8)
        line = next(line for line in (entry / "status").read_bytes().splitlines() if line.startswith(b"Uid:"))
        return int(line.split()[1])
    return _members(container_id, proc, lambda entry: real_uid(entry) == uid)


def host_sees(container_id: str, pid: int, *, proc: Path = Path("/proc")) -> bool:
    """Whether this host's /proc shows the container's processes (its main process `pid`, as the engine
    reports it, is in the container's cgroup here) and this process may signal them (root's)."""
    if pid <= 0 or os.geteuid() != 0:
        return False
    try:
        return container_id in (proc / str(pid) / "cgroup").read_text(errors="replace")
    except OSError:
        return False


def _kill_rounds(members: Callable[[], list[int]], rounds: int) -> int:
    killed = 0
    for _ in range(rounds):
        pids = members()
        if not pids:
            break
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
                killed += 1
            except (ProcessLookupError, PermissionError):
                continue  # gone already, or not ours: the in-container kill is the fallback
    return killed


def kill_host_group(pgid: int, container_id: str, *, rounds: int = 20, proc: Path = Path("/proc")) -> int:
    """SIGKILL the container's processes in group `pgid` until none is left; returns how many were killed."""
    return _kill_rounds(lambda: _group_members(pgid, container_id, proc), rounds)


def kill_host_uid(uid: int, container_id: str, *, rounds: int = 20, proc: Path = Path("/proc")) -> int:
    """SIGKILL the container's processes of (real) uid `uid` until none is left; how many were killed."""
    return _kill_rounds(lambda: _uid_members(uid, container_id, proc), rounds)
