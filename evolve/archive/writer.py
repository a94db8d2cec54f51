"""One writer per run (an advisory lock naming its holder), and the error for a damaged database."""

from __future__ import annotations

import fcntl
import os
import sys
import time
from pathlib import Path
from typing import IO

from evolve.errors import EvolveError

__all__ = ["RunDamaged", "claim_writer"]


class RunDamaged(EvolveError):
    """The run's database is not a readable run database (truncated, empty, overwritten)."""

    def __init__(self, database: Path, cause: Exception) -> None:
        reason = "the file is empty" if database.stat().st_size == 0 else str(cause)
        super().__init__(
            f"{database}: damaged run database ({reason}); it was left as it is: restore it "
            "from a backup, or `sqlite3 run.sqlite .recover` into a copy"
        )


GRACE_S = 10.0
OWN_GRACE_S = 2.0


def _try_lock(handle: IO[str]) -> bool:
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def _holder(handle: IO[str]) -> tuple[str, bool]:
    """Who the lock file names, and whether that process is still alive."""
    handle.seek(0)
    text = handle.read().strip()
    try:
        os.kill(int(text.split()[1]), 0)
    except ProcessLookupError:
        return text, False
    except (IndexError, ValueError, PermissionError):  # unreadable, or alive under another user
        return text or "another process", True
    return text, True


def claim_writer(path: Path) -> IO[str]:
    """Hold `path`'s writer lock (released when the handle closes or the process dies), or refuse
    with one line naming the holder."""
    handle = (path / "writer.lock").open("a+")
    # A writer that ended a moment ago may live on briefly in a child it was forking (which shares
    # the lock until its exec): when the named holder is dead, or is this process (which closed the
    # run), wait a little for the lock to come free; a live other holder is refused at once.
    start = time.monotonic()
    while not _try_lock(handle):
        holder, alive = _holder(handle)
        own = holder.startswith(f"pid {os.getpid()} ")
        if (alive and not own) or time.monotonic() - start > (OWN_GRACE_S if own else GRACE_S):
            handle.close()
            raise EvolveError(f"{path} is being written by {holder}; wait for it to end or stop it first")
        time.sleep(0.05)
    handle.seek(0)
    handle.truncate()
    handle.write(
        f"pid {os.getpid()} ({' '.join(Path(a).name if i == 0 else a for i, a in enumerate(sys.argv[:3]))})"
    )
    handle.flush()
    return handle
