"""Faults of the machine (disk, file system, database, git) as one line: the path, the cause, what to do.

The CLI's entry point turns these into one line on stderr and a non-zero exit instead of a traceback.
Nothing here repairs anything: a damaged file is left as it is for the user to restore or recover.
"""

from __future__ import annotations

import errno
import re
import sqlite3

import git

_RESUME = "then `evolve run --resume RUN` continues where the run stopped"
_OS_ADVICE = {
    errno.ENOSPC: f"no space left on the device: free space there, {_RESUME}",
    errno.EDQUOT: f"disk quota exceeded: free space or raise the quota, {_RESUME}",
    errno.EROFS: "the file system is read-only: remount it read-write or copy the run to a writable disk",
    errno.EACCES: "permission denied: run as the run's owner or fix its permissions (nothing was changed)",
    errno.EPERM: (
        "operation not permitted: run as the run's owner or fix its permissions (nothing was changed)"
    ),
    errno.EIO: "input/output error: the disk is failing; copy the run elsewhere and check the disk",
}
_GIT_DISK_FULL = re.compile(r"unable to write|No space left|insufficient disk|disk quota", re.IGNORECASE)
_GIT_DIR = re.compile(r"--git-dir=(\S+)")
_DB_DAMAGED = ("malformed", "not a database", "no such table", "no such column", "file is encrypted")


def describe(exc: BaseException) -> str | None:
    """One line for a known fault, None for anything else (which stays a traceback: a bug)."""
    if isinstance(exc, OSError) and exc.errno in _OS_ADVICE:
        where = exc.filename or "the run directory"
        return f"{where}: {_OS_ADVICE[exc.errno]}"
    if isinstance(exc, sqlite3.DatabaseError):
        return _database(exc)
    if isinstance(exc, git.GitCommandError):
        return _git(exc)
    return None


def _database(exc: sqlite3.DatabaseError) -> str:
    text = str(exc)
    notes = [
        note.removeprefix("database: ")
        for note in getattr(exc, "__notes__", ())
        if note.startswith("database: ")
    ]
    where = notes[0] if notes else "run.sqlite"
    if "readonly" in text or "read-only" in text:
        return (
            f"{where}: {text}: the run's database cannot be written (read-only disk or file); make it "
            f"writable, {_RESUME}"
        )
    if "disk is full" in text or "database or disk is full" in text:
        return f"{where}: {text}: free space on its disk, {_RESUME}"
    if "locked" in text:
        return f"{where}: {text}: another process holds the database; wait for it or stop it"
    if any(sign in text for sign in _DB_DAMAGED):
        return (
            f"{where}: damaged run database ({text}); it was left as it is: restore it from a backup, "
            "or `sqlite3 run.sqlite .recover` into a copy"
        )
    return f"{where}: database error ({text})"


def _git(exc: git.GitCommandError) -> str:
    stderr = (exc.stderr or "").strip().strip("'").strip()
    cause = stderr.splitlines()[-1].strip() if stderr else f"exit status {exc.status}"
    found = _GIT_DIR.search(
        " ".join(map(str, exc.command)) if isinstance(exc.command, list) else str(exc.command)
    )
    where = found.group(1) if found else "the run's code.git"
    if _GIT_DISK_FULL.search(stderr):
        return f"{where}: git could not write ({cause}): free space on its disk, {_RESUME}"
    return f"{where}: git failed ({cause}); the node it was writing was not recorded, {_RESUME}"
