"""A code directory as git stores it: its exact entries, their git tree id, and a directory made from them.

One rule decides what a tree of agent code is, wherever it is read: the regular files and symlinks under
a directory (symlinks never followed), with git's modes, less `SKIPPED` directories and `*.pyc` files.
No ignore file, attribute or config of the tree's own applies, so the gate's copy of a child, the commit
the archive makes of it and every checkout of that commit hold the same bytes, and the git tree id
(`tree_id`, computed here without git) names that content wherever it travels.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Mapping
from pathlib import Path

SKIPPED = frozenset({b".git", b"__pycache__", b".pytest_cache"})
"""Directory names never part of a tree (the agent's git data, caches the engine ignores)."""
LINK = "120000"
"""git's mode of a symlink."""
Entry = tuple[str, bytes]
"""(git mode, content): `100644`/`100755` and the file's bytes, or `120000` and the link's target."""
_NAMED_ONLY_AS_FILES = frozenset({b".gitmodules", b".gitattributes", b".gitignore", b".mailmap"})


def tree_entries(root: Path) -> dict[bytes, Entry]:
    """Every file and symlink under `root` by relative path (bytes), without following links."""
    entries: dict[bytes, Entry] = {}
    base = os.fsencode(root)
    for top, dirs, files in os.walk(base, followlinks=False):
        keep = []
        for name in dirs:
            path = os.path.join(top, name)
            if os.path.islink(path):
                files.append(name)  # a link to a directory is a link, never a directory to walk
            elif name not in SKIPPED:
                os.chmod(path, stat.S_IMODE(os.lstat(path).st_mode) | 0o700)  # the agent may have locked it
                keep.append(name)
        dirs[:] = keep
        for name in files:
            if name.endswith(b".pyc"):
                continue
            path = os.path.join(top, name)
            rel = os.path.relpath(path, base)
            info = os.lstat(path)
            if stat.S_ISLNK(info.st_mode):
                entries[rel] = (LINK, os.readlink(path))
            elif stat.S_ISREG(info.st_mode):
                os.chmod(path, stat.S_IMODE(info.st_mode) | 0o600)
                mode = "100755" if info.st_mode & 0o111 else "100644"
                with open(path, "rb") as handle:
                    entries[rel] = (mode, handle.read())
    return entries


_Level = dict[bytes, "_Level | Entry"]


def tree_id(entries: Mapping[bytes, Entry]) -> str:
    """The git tree id (SHA-1) of `entries`: what `git write-tree` prints for them."""
    root: _Level = {}
    for rel, entry in entries.items():
        *parents, name = rel.split(b"/")
        level = root
        for part in parents:
            below = level.setdefault(part, {})
            assert isinstance(below, dict), f"{rel!r} lies under a file"
            level = below
        level[name] = entry
    return _tree(root).hex()


def _object(kind: bytes, body: bytes) -> bytes:
    return hashlib.sha1(kind + b" %d\0" % len(body) + body, usedforsecurity=False).digest()


def _tree(level: _Level) -> bytes:
    rows = []
    for name, value in level.items():
        if isinstance(value, dict):
            rows.append((name + b"/", b"40000 " + name + b"\0" + _tree(value)))
        else:
            mode, content = value
            rows.append((name, mode.encode() + b" " + name + b"\0" + _object(b"blob", content)))
    # git orders a tree `name/` by its slash
    return _object(b"tree", b"".join(row for _, row in sorted(rows)))


def git_refuses(rel: bytes, mode: str) -> bool:
    """Whether git refuses to check out this path (`verify_path`): a `.git` component in any case or
    spelling that Windows reads as `.git` (git's `core.protectNTFS`, on by default), or a symlink where git
    reads one of its own files. Such a path can be committed, but no git checkout writes it back. (macOS's
    ignorable code points, `core.protectHFS`, off on Linux, are not checked.)"""
    for component in rel.split(b"/"):
        for part in component.split(b"\\"):
            name = part.split(b":")[0].lower().rstrip(b". ")
            if name in (b".git", b"git~1"):
                return True
    return mode == LINK and rel.rsplit(b"/", 1)[-1].lower() in _NAMED_ONLY_AS_FILES


def write_entries(entries: Mapping[bytes, Entry], dest: Path) -> Path:
    """Write `entries` into `dest` (created if missing; a file or link of the same name is replaced, as a
    checkout replaces it): files with their mode, symlinks as symlinks, made last, and no write goes
    through a link."""
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    base = os.fsencode(dest)
    for rel, (mode, content) in sorted(entries.items(), key=lambda item: item[1][0] == LINK):
        parts = rel.split(b"/")
        if rel.startswith(b"/") or any(part in (b"", b".", b"..") for part in parts):
            raise ValueError(f"refusing to write {rel!r}: not a path inside the tree")
        for depth in range(1, len(parts)):
            if os.path.islink(os.path.join(base, *parts[:depth])):
                raise ValueError(f"refusing to write {rel!r}: {b'/'.join(parts[:depth])!r} is a symlink")
        path = os.path.join(base, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if os.path.lexists(path) and not os.path.isdir(path) or os.path.islink(path):
            os.unlink(path)
        if mode == LINK:
            os.symlink(content, path)
            continue
        with open(path, "xb") as handle:
            handle.write(content)
        os.chmod(path, 0o755 if mode == "100755" else 0o644)
    return dest


def import_stream(ref: bytes, entries: Mapping[bytes, Entry]) -> bytes:
    """A `git fast-import` commit of exactly `entries` to `ref` (no parent, no ignore rules, any name)."""
    parts = [b"commit " + ref + b"\ncommitter evolve <evolve@localhost> 0 +0000\ndata 0\ndeleteall\n"]
    for rel in sorted(entries):
        mode, content = entries[rel]
        parts.append(b"M " + mode.encode() + b" inline " + _quote(rel) + b"\n")
        parts.append(b"data " + str(len(content)).encode() + b"\n" + content + b"\n")
    return b"".join(parts) + b"\n"


def _quote(path: bytes) -> bytes:
    """C-style quoting, as fast-import reads paths (any byte of a name survives)."""
    out = bytearray(b'"')
    for byte in path:
        if byte in (0x22, 0x5C):
            out += b"\\" + bytes([byte])
        elif byte < 0x20 or byte >= 0x7F:
            out += b"\\%03o" % byte
        else:
            out.append(byte)
    return bytes(out + b'"')
