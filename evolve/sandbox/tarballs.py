"""Tar helpers for copying files into and out of sandboxes (the docker API speaks tar)."""

from __future__ import annotations

import io
import os
import posixpath
import shutil
import tarfile
import time
from pathlib import Path
from typing import IO


class TarBuilder:
    """One tar built from several pieces (files from bytes, directories, host trees), each under its
    own path, so several copies into a sandbox cost one extraction. Entries are owned by uid:gid."""

    def __init__(self, *, uid: int = 1000, gid: int = 1000) -> None:
        self._buffer = io.BytesIO()
        self._tar = tarfile.TarFile(fileobj=self._buffer, mode="w")  # closed by getvalue
        self._uid, self._gid = uid, gid

    def add_bytes(self, name: str, content: bytes, *, mode: int = 0o644) -> None:
        info = tarfile.TarInfo(name)
        info.size = len(content)
        info.mode = mode
        info.uid, info.gid = self._uid, self._gid
        info.mtime = int(time.time())
        self._tar.addfile(info, io.BytesIO(content))

    def add_dir(self, name: str) -> None:
        info = tarfile.TarInfo(name)
        info.type = tarfile.DIRTYPE
        info.mode = 0o755
        info.uid, info.gid = self._uid, self._gid
        info.mtime = int(time.time())
        self._tar.addfile(info)

    def add_tree(self, host_dir: Path, prefix: str = "") -> None:
        """The contents of `host_dir`, as entries under `prefix` (relative; "" for none)."""

        def owned(info: tarfile.TarInfo) -> tarfile.TarInfo:
            info.uid, info.gid = self._uid, self._gid
            info.uname = info.gname = ""
            return info

        for child in sorted(host_dir.iterdir()):
            self._tar.add(child, arcname=posixpath.join(prefix, child.name), filter=owned)

    def add_archive(self, archive: bytes, prefix: str) -> None:
        """The entries of another tar (such as one docker made), under `prefix`."""
        with tarfile.open(fileobj=io.BytesIO(archive), mode="r") as source:
            for member in source.getmembers():
                data = source.extractfile(member) if member.isfile() else None
                member.name = posixpath.join(prefix, member.name)
                if member.islnk():
                    member.linkname = posixpath.join(prefix, member.linkname)
                member.uid, member.gid = self._uid, self._gid
                member.uname = member.gname = ""
                self._tar.addfile(member, data)

    def getvalue(self) -> bytes:
        self._tar.close()
        return self._buffer.getvalue()


def tar_of_bytes(name: str, content: bytes, *, uid: int = 1000, gid: int = 1000, mode: int = 0o644) -> bytes:
    """A tar holding one file `name` (relative), owned by uid:gid."""
    builder = TarBuilder(uid=uid, gid=gid)
    builder.add_bytes(name, content, mode=mode)
    return builder.getvalue()


def tar_of_dirs(names: list[str], *, uid: int = 1000, gid: int = 1000) -> bytes:
    """A tar holding the (relative) directories `names`, owned by uid:gid."""
    builder = TarBuilder(uid=uid, gid=gid)
    for name in names:
        builder.add_dir(name)
    return builder.getvalue()


def tar_of_dir(host_dir: Path, *, uid: int = 1000, gid: int = 1000) -> bytes:
    """A tar of the contents of `host_dir` (entries relative to it), re-owned to uid:gid."""
    builder = TarBuilder(uid=uid, gid=gid)
    builder.add_tree(host_dir)
    return builder.getvalue()


DEPTH_CAP = 128
"""Directories deep a tree copied out of a sandbox may go. The container takes any depth; the host walks
and removes trees by recursion (os.walk, shutil.rmtree), so a deeper tree is refused, as the agent's doing."""
PATH_CAP = 2048
"""Bytes of a path in a tree copied out of a sandbox, relative to the tree. The container takes any length
(relative to a directory); the host writes trees under prefixes of its own within PATH_MAX (4096)."""


class TreeRefused(tarfile.TarError):
    """A tar whose tree the host will not write: too deep, a path too long, or more bytes than its cap."""


def extract_dir(source: bytes | IO[bytes], host_dir: Path, *, strip: str, cap: int | None = None) -> None:
    """Extract a tar (whose top entry is `strip`) from bytes or a file into `host_dir`, safely: TreeRefused,
    with nothing written, for a tree past DEPTH_CAP or PATH_CAP or (with `cap`) whose files hold more than
    `cap` bytes as the host reads them (each hard link in full); a tar refused midway (a link out of the
    tree, a special file) leaves nothing of what it extracted in a `host_dir` it made."""
    made = not host_dir.exists()
    host_dir.mkdir(parents=True, exist_ok=True)
    fileobj = io.BytesIO(source) if isinstance(source, bytes) else source
    try:
        with tarfile.open(fileobj=fileobj, mode="r") as tar:
            members = []
            for member in tar.getmembers():
                if member.name == strip:
                    continue
                member.name = posixpath.relpath(member.name, strip)
                members.append(member)
            _check_tree(members, cap)
            tar.extractall(host_dir, members=members, filter="data")
    except BaseException:
        if made:
            shutil.rmtree(host_dir, ignore_errors=True)
        raise


def _check_tree(members: list[tarfile.TarInfo], cap: int | None) -> None:
    """TreeRefused when the members pass the depth, path or byte caps (a hard link counts its target's
    size)."""
    sizes = {member.name: member.size for member in members if member.isreg()}
    total = 0
    for member in members:
        name = os.fsencode(member.name)
        if len(name) > PATH_CAP:
            raise TreeRefused(f"a path of {len(name)} bytes (the cap is {PATH_CAP}): {name[:80]!r}...")
        if name.count(b"/") >= DEPTH_CAP:
            raise TreeRefused(
                f"a path {name.count(b'/') + 1} directories deep (the cap is {DEPTH_CAP}): {name[:80]!r}..."
            )
        if member.islnk():
            total += sizes.get(posixpath.normpath(member.linkname), 0)  # tar names its target as `./path`
        elif member.isreg():
            total += member.size
    if cap is not None and total > cap:
        raise TreeRefused(
            f"its files hold {total} bytes as the host reads them (hard links in full), the cap is {cap}"
        )


def single_file(chunks: bytes) -> bytes | None:
    """The content of the one regular file in a docker `get_archive` tar; None if it is not a file."""
    with tarfile.open(fileobj=io.BytesIO(chunks), mode="r") as tar:
        member = tar.next()
        if member is None or not member.isfile():
            return None
        handle = tar.extractfile(member)
        return handle.read() if handle is not None else None
