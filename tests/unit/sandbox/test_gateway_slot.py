"""A sandbox's own gateway directory: the job's socket linked in, and a killed owner's swept."""

from __future__ import annotations

import socket
import tempfile
from pathlib import Path

from evolve.sandbox.gateway_slot import PREFIX, SOCKET_NAME, link_socket, new_slot, remove_slot, sweep_slots


def test_the_jobs_socket_is_reached_through_its_slot_and_dead_owners_slots_are_swept():
    with tempfile.TemporaryDirectory(dir="/tmp") as short:  # a socket's path has a length limit
        _check(Path(short))


def _check(tmp_path: Path) -> None:
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(tmp_path / "job.sock"))
    server.listen(1)
    slot = new_slot(tmp_path)
    assert link_socket(slot, tmp_path / "job.sock") and [p.name for p in slot.iterdir()] == [SOCKET_NAME]
    client = socket.socket(socket.AF_UNIX)
    client.connect(str(slot / SOCKET_NAME))  # the link is the same socket
    server.accept()[0].close()
    client.close()
    server.close()
    assert not link_socket(slot, tmp_path / "missing.sock")
    dead = tmp_path / f"{PREFIX}999999999.1-abc"  # no such pid
    dead.mkdir()
    assert sweep_slots(tmp_path) == [dead] and slot.exists()  # the live owner's stays
    remove_slot(slot)
    assert not slot.exists()
