"""How a Docker sandbox reaches the model gateway: a directory of its own, mounted read-only.

Each container gets a fresh host directory at `/run/evolve`; the engine hard-links the job's gateway
socket into it as `llm.sock` (a Unix socket is reached through any of its links). So a container can
be started before its job is known (evolve.sandbox.pool) and still sees exactly one socket: its own
job's, never the gateway's directory. Where a link cannot be made (another filesystem), the socket
file itself is bind-mounted instead, as before, into a container started for that job.
"""

from __future__ import annotations

import logging
import os
import shutil
import socket
import tempfile
from pathlib import Path

from evolve.sandbox.owner import current_owner, owner_alive

log = logging.getLogger(__name__)
SOCKET_NAME = "llm.sock"
PREFIX = "evolve-gw-slot-"


def new_slot(root: Path | None = None) -> Path:
    """An empty directory for one container's gateway socket (readable by the sandbox's uid 1000),
    named after its owner so that a sweep can remove what a killed process left."""
    _host, pid, ticks = current_owner().rsplit(":", 2)  # short: the host's path to a socket has a limit
    slot = Path(tempfile.mkdtemp(prefix=f"{PREFIX}{pid}.{ticks}-", dir=root))
    os.chmod(slot, 0o755)
    return slot


def link_socket(slot: Path, socket: Path) -> bool:
    """Put `socket` into `slot`; False when it cannot be linked there (another filesystem)."""
    try:
        os.link(socket, slot / SOCKET_NAME)
    except OSError as exc:
        log.debug("cannot link the gateway socket %s into %s: %s", socket, slot, exc)
        return False
    return True


def remove_slot(slot: Path | None) -> None:
    if slot is not None:
        shutil.rmtree(slot, ignore_errors=True)  # a leftover only costs an empty directory in /tmp


def sweep_slots(root: Path | None = None) -> list[Path]:
    """Remove the slots whose owner on this host is gone (a killed engine's); returns them."""
    removed = []
    for slot in Path(root or tempfile.gettempdir()).glob(f"{PREFIX}*"):
        pid, _, ticks = slot.name[len(PREFIX) :].rsplit("-", 1)[0].partition(".")
        if owner_alive(f"{socket.gethostname()}:{pid}:{ticks}") is False:
            remove_slot(slot)
            removed.append(slot)
    return removed
