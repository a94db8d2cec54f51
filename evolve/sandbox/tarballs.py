"""Tar helpers for copying files into and out of sandboxes (the docker API speaks tar)."""

from __future__ import annotations

import io
import posixpath
import tarfile
import time
from pathlib import Path
from typing import IO


def tar_of_bytes(name: str, content: bytes, *, uid: int = 1000, gid: int = 1000, mode: int = 0o644) -> bytes:
    """A tar holding one file `name` (relative), owned by uid:gid."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        info = tarfile.TarInfo(name)
        info.size = len(content)
        info.mode = mode
        info.uid, info.gid = uid, gid
        info.mtime = int(time.time())
        tar.addfile(info, io.BytesIO(content))
    return buffer.getvalue()


def tar_of_dirs(names: list[str], *, uid: int = 1000, gid: int = 1000) -> bytes:
    """A tar holding the (relative) directories `names`, owned by uid:gid."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for name in names:
            info = tarfile.TarInfo(name)
            info.type = tarfile.DIRTYPE
            info.mode = 0o755
            info.uid, info.gid = uid, gid
            info.mtime = int(time.time())
            tar.addfile(info)
    return buffer.getvalue()


def tar_of_dir(host_dir: Path, *, uid: int = 1000, gid: int = 1000) -> bytes:
    """A tar of the contents of `host_dir` (entries relative to it), re-owned to uid:gid."""

    def owned(info: tarfile.TarInfo) -> tarfile.TarInfo:
        info.uid, info.gid = uid, gid
        info.uname = info.gname = ""
        return info

    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for child in sorted(host_dir.iterdir()):
            tar.add(child, arcname=child.name, filter=owned)
    return buffer.getvalue()


def extract_dir(source: bytes | IO[bytes], host_dir: Path, *, strip: str) -> None:
    """Extract a tar (whose top entry is `strip`) from bytes or a file into `host_dir`, safely."""
    host_dir.mkdir(parents=True, exist_ok=True)
    fileobj = io.BytesIO(source) if isinstance(source, bytes) else source
    with tarfile.open(fileobj=fileobj, mode="r") as tar:
        members = []
        for member in tar.getmembers():
            if member.name == strip:
                continue
            member.name = posixpath.relpath(member.name, strip)
            members.append(member)
        tar.extractall(host_dir, members=members, filter="data")


def single_file(chunks: bytes) -> bytes | None:
    """The content of the one regular file in a docker `get_archive` tar; None if it is not a file."""
    with tarfile.open(fileobj=io.BytesIO(chunks), mode="r") as tar:
        member = tar.next()
        if member is None or not member.isfile():
            return None
        handle = tar.extractfile(member)
        return handle.read() if handle is not None else None
