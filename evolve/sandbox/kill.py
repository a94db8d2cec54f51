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
import time
from collections.abc import Callable
from pathlib import Path

_CGROUPS = Path("/sys/fs/cgroup")


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
    return _members(container_id, proc, lambda entry: _real_uid(entry) == uid)


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


def container_freezer(container_id: str, *, cgroups: Path = _CGROUPS) -> Path | None:
    """The container's freezer directory where Docker puts it (cgroup v1 or v2, either cgroup driver) and
    this host can write it; None where it is not found there (look it up by a pid: `freezer_of`)."""
    for directory, state in (
        (cgroups / "freezer" / "docker" / container_id, "freezer.state"),
        (cgroups / "freezer" / "system.slice" / f"docker-{container_id}.scope", "freezer.state"),
        (cgroups / "system.slice" / f"docker-{container_id}.scope", "cgroup.freeze"),
        (cgroups / "docker" / container_id, "cgroup.freeze"),
    ):
        if os.access(directory / state, os.W_OK):
            return directory
    return None


def freezer_of(pid: int, *, proc: Path = Path("/proc"), cgroups: Path = _CGROUPS) -> Path | None:
    """The freezer directory of the cgroup process `pid` is in (cgroup v1's freezer controller, or the
    unified v2 hierarchy's), where this host can write it; None where it cannot."""
    try:
        lines = (proc / str(pid) / "cgroup").read_text(errors="replace").splitlines()
    except OSError:
        return None
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if "freezer" in controllers.split(","):
            directory = cgroups / "freezer" / path.lstrip("/")
            return directory if os.access(directory / "freezer.state", os.W_OK) else None
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if controllers == "":
            directory = cgroups / path.lstrip("/")
            return directory if os.access(directory / "cgroup.freeze", os.W_OK) else None
    return None


def kill_frozen_uid(
    uid: int, freezer: Path, *, proc: Path = Path("/proc"), wait_s: float = 5.0
) -> int | None:
    """SIGKILL every process of (real) uid `uid` in the cgroup of `freezer`, with the cgroup frozen
    meanwhile, so none can fork between the look and the kill (a fork loop escapes any scan); how many,
    or None when the cgroup would not freeze in time (the caller falls back to another way)."""
    v1 = (freezer / "freezer.state").exists()
    state, frozen, thawed = ("freezer.state", "FROZEN", "THAWED") if v1 else ("cgroup.freeze", "1", "0")
    (freezer / state).write_text(frozen)
    try:
        deadline = time.monotonic() + wait_s
        while not _frozen(freezer, v1):
            if time.monotonic() > deadline:
                return None
            time.sleep(0.001)
        killed = 0
        for pid in (freezer / "cgroup.procs").read_text().split():
            try:
                if _real_uid(proc / pid) == uid:
                    os.kill(int(pid), signal.SIGKILL)  # delivered as the cgroup thaws, before any user code
                    killed += 1
            except (OSError, ValueError, StopIteration):
                continue  # gone meanwhile
        return killed
    finally:
        (freezer / state).write_text(thawed)


def _frozen(freezer: Path, v1: bool) -> bool:
    if v1:
        return (freezer / "freezer.state").read_text().strip() == "FROZEN"
    return "frozen 1" in (freezer / "cgroup.events").read_text().splitlines()


def _real_uid(entry: Path) -> int:
    """A process's real uid, from its status read as bytes (a process names itself in any bytes)."""
    line = next(line for line in (entry / "status").read_bytes().splitlines() if line.startswith(b"Uid:"))
    return int(line.split()[1])
