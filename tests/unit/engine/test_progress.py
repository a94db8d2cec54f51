"""Warnings and log records during a live display go through its console, not raw onto stderr."""

from __future__ import annotations

import io
import logging
import warnings

from rich.console import Console

from evolve.engine.progress import RichProgress, Snapshot


def test_docker_warnings_are_printed_above_the_live_table_not_through_it(capsys):
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, color_system=None, width=200)
    with RichProgress(console) as progress:
        progress.update(Snapshot(evaluations_budget=10))
        logging.getLogger("evolve.sandbox.docker_backend").warning("container 1234 was gone already")
        warnings.warn("docker: the engine answered slowly", UserWarning, stacklevel=1)
    shown = out.getvalue()
    assert "container 1234 was gone already" in shown and "the engine answered slowly" in shown
    assert capsys.readouterr().err == ""
    assert not [h for h in logging.getLogger().handlers if h.__class__.__name__ == "RichHandler"]


def test_the_line_log_prints_changes_and_a_rare_heartbeat_not_every_tick():
    from evolve.engine.progress import LineProgress

    now = [0.0]
    out = io.StringIO()
    progress = LineProgress(out, min_interval_s=5.0, clock=lambda: now[0], heartbeat_s=300.0)
    used = 0
    for second in range(0, 3600, 5):  # an update every 5 s for an hour; one change every 10 minutes
        now[0] = float(second)
        used = second // 600
        progress.update(Snapshot(evaluations_used=used, evaluations_budget=10, elapsed_s=float(second)))
    lines = out.getvalue().splitlines()
    changes = [line for line in lines if line.startswith("evals")]
    assert len({line.split()[1] for line in changes}) == 6  # every change (0/10 .. 5/10) is logged
    assert len(lines) == 12  # 6 changes + one heartbeat in each 10-minute quiet stretch, not 720 lines
    progress.update(Snapshot(evaluations_used=used, evaluations_budget=10, elapsed_s=3600.0, final=True))
    assert len(out.getvalue().splitlines()) == 13  # the final line always
