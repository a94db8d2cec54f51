"""Killing a command's whole process group from the host, even while it forks (fork bombs).

`timeout` in the container sends TERM to its group and then exits with its direct child, so
children that survive TERM would live on. The engine kills what is left of the group from the
host, where a full pids cgroup cannot stop it: every process on this host whose process group is
the command's and whose cgroup is the container's gets SIGKILL, in rounds until none is left.
Where the engine is remote, the host's /proc shows none of them and the caller falls back to a
kill inside the container.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path


def _group_members(pgid: int, container_id: str, proc: Path) -> list[int]:
    members = []
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            # Fields after the parenthesised command: state, ppid, pgrp, ...
            pgrp = int(stat.rsplit(")", 1)[1].split()[2])
            if pgrp == pgid and container_id in (entry / "cgroup").read_text():
                members.append(int(entry.name))
        except (OSError, ValueError, IndexError):
            continue  # the process ended while we looked, or is not ours to read
    return members


def kill_host_group(pgid: int, container_id: str, *, rounds: int = 20, proc: Path = Path("/proc")) -> int:
    """SIGKILL the container's processes in group `pgid` until none is left; returns how many were killed."""
    killed = 0
    for _ in range(rounds):
        members = _group_members(pgid, container_id, proc)
        if not members:
            break
        for pid in members:
            try:
                os.kill(pid, signal.SIGKILL)
                killed += 1
            except (ProcessLookupError, PermissionError):
                continue  # gone already, or not ours: the in-container kill is the fallback
    return killed
