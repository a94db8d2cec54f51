"""`evolve report`: a run as one self-contained HTML page (tree, lineage, curves, outcomes, usage).

The report reads the run as a reader (`Run.open` without the writer lock), so it can be written
while the run is live; the file is replaced atomically, so a browser never loads half a page.
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

from evolve.archive.store import Run
from evolve.report.data import ReportData, collect, overlay
from evolve.report.live import live_report
from evolve.report.page import render

__all__ = ["ReportData", "collect", "live_report", "render", "watch_report", "write_report"]


def write_report(run: Run | Path | str, out: Path | str, *, stop_reason: str | None = None,
                 refresh_s: float | None = None, others: Sequence[Path] = ()) -> Path:  # fmt: skip
    """Write the report of `run` (an open run, or a run directory opened read-only) to `out`; `others`:
    run directories drawn over it (their curves and answers)."""
    out = Path(out)
    overlays = []
    for other in others:
        with Run.open(other) as opened:
            overlays.append(overlay(opened))
    if isinstance(run, Run):
        data = collect(run, stop_reason=stop_reason)
    else:
        with Run.open(run) as opened:
            data = collect(opened, stop_reason=stop_reason)
    page = render(replace(data, overlays=overlays), refresh_s)
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile("w", encoding="utf-8", dir=out.parent, prefix=f".{out.name}.",
                                     delete=False) as staged:  # fmt: skip
        staged.write(page)
    os.chmod(staged.name, 0o644)  # a temporary file is private; the page is for anyone who may read the run
    os.replace(staged.name, out)
    return out


def watch_report(run_dir: Path, out: Path, every_s: float, *, rounds: int | None = None,
                 sleep: Callable[[float], None] = time.sleep) -> int:  # fmt: skip
    """Rewrite the report every `every_s` seconds (until interrupted, or `rounds` times); returns the
    rounds written. The page reloads itself as often."""
    written = 0
    while rounds is None or written < rounds:
        write_report(run_dir, out, refresh_s=every_s)
        written += 1
        if rounds is None or written < rounds:
            sleep(every_s)
    return written
