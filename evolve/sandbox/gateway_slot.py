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
import tempfile
from pathlib import Path

log = logging.getLogger(__name__)
SOCKET_NAME = "llm.sock"


def new_slot() -> Path:
    """An empty directory for one container's gateway socket (readable by the sandbox's uid 1000)."""
    slot = Path(tempfile.mkdtemp(prefix="evolve-gw-slot-"))
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
