"""Why a run stopped, recorded when it stops (run meta), so a report written later says it exactly.

The runner records each session's stop as it happens (a run killed after a Ctrl-C keeps "stop
requested") and clears it when a session starts; the report and `evolve run` read it from here.
"""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING

from evolve.archive.vocab import StopReason

if TYPE_CHECKING:
    from evolve.archive.store import Run

STOP_KEY = "stop_reason"
"""The run meta key of the last session's stop (JSON: reason, text, time); "" while a session runs."""


def record_stop(run: Run, reason: StopReason | None, text: str = "") -> None:
    """Record why the run stopped, when it stops (`reason` None: a session is running now)."""
    run.set_meta(
        STOP_KEY,
        ""
        if reason is None
        else json.dumps({"reason": reason.value, "text": text or str(reason), "at": time.time()}),
    )


def recorded_stop(run: Run) -> str | None:
    """The recorded stop's text; a line saying so while a session runs (or after one was killed); None
    when the run never recorded one (made before stops were recorded, or imported)."""
    try:
        value = run.meta(STOP_KEY)
    except KeyError:
        return None
    if not value:
        return "running, or its process was killed before it could stop: no stop recorded"
    return str(json.loads(value)["text"])
