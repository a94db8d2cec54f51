"""`evolve run --report FILE`: a thread that rewrites the report while the run goes on.

The thread opens the run as a reader each round (never the writer lock, which the run holds), and the
run's own command writes the last page with the runner's stop reason when the run ends.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from evolve.errors import EvolveError

EVERY_S = 30.0
"""Seconds between rewrites during a run; the page reloads itself as often."""


@contextmanager
def live_report(run_dir: Path, out: Path, every_s: float = EVERY_S) -> Iterator[None]:
    """Rewrite `out` from `run_dir` every `every_s` seconds while the block runs."""
    from evolve.report import write_report

    stop = threading.Event()

    def loop() -> None:
        while not stop.wait(every_s):
            if not (run_dir / "run.sqlite").is_file():
                continue  # the run is not created yet (models still starting)
            try:
                write_report(run_dir, out, refresh_s=every_s)
            except (EvolveError, sqlite3.Error, OSError):
                continue  # a round that met the run mid-creation: the next round writes the page

    thread = threading.Thread(target=loop, name="evolve-report", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()
