"""Which process owns a sandbox container, and whether it still lives.

Every container carries `evolve.owner=<host>:<pid>:<start ticks>`; the start time (from /proc) keeps
a recycled pid from passing for the dead owner. A sweep removes containers whose owner on this host is
gone, so a `kill -9` of the process that made a container never leaves it behind for long.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path

OWNER_LABEL = "evolve.owner"


def _start_ticks(pid: int) -> str | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None  # no such process (or no /proc: then nothing is ever called dead, see owner_alive)
    return stat.rsplit(")", 1)[1].split()[19]  # field 22, counted after the command name


def current_owner() -> str:
    """The label value naming this process."""
    pid = os.getpid()
    return f"{socket.gethostname()}:{pid}:{_start_ticks(pid) or '?'}"


def owner_alive(label: str | None) -> bool | None:
    """Whether the owner named by `label` lives; None when this host cannot tell (another host, no label)."""
    if not label or label.count(":") < 2:
        return None
    host, pid, ticks = label.rsplit(":", 2)
    if host != socket.gethostname() or not pid.isdigit() or not Path("/proc/self/stat").exists():
        return None
    now = _start_ticks(int(pid))
    return now is not None and (ticks == "?" or now == ticks)
