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
