"""Progress of a run: a live rich display on a terminal, a plain line log elsewhere."""

from __future__ import annotations

import logging
import sys
import time
from dataclasses import dataclass, field, replace
from types import TracebackType
from typing import Protocol, Self

from rich.console import Console
from rich.live import Live
from rich.logging import RichHandler
from rich.table import Table
from scipy.stats import beta

from evolve.archive.vocab import JobKind


@dataclass(frozen=True)
class Snapshot:
    """What the runner shows after each change."""

    in_flight: list[tuple[JobKind, str, str | None]] = field(default_factory=list)
    """(kind, node, task) of each job in flight."""
    evaluations_used: int = 0
    evaluations_budget: int = 0
    nodes_valid: int = 0
    nodes_invalid: int = 0
    best_node: str | None = None
    best_successes: int = 0
    best_failures: int = 0
    tokens: int = 0
    cost_usd: float = 0.0
    cpu_hours: float = 0.0
    elapsed_s: float = 0.0
    eta_s: float | None = None
    """Wall seconds left, held-out scoring included (`evolve.engine.costs.eta_seconds`); None: not known
    yet."""
    heldout_scored: int = 0
    heldout_total: int = 0
    """Held-out evaluations scored, of those the run owes (the final agent's, and the seed's too)."""
    final: bool = False

    @property
    def best_interval(self) -> tuple[float, float]:
        """The 95 % interval of the best node's pass rate under Beta(1+s, 1+f)."""
        a, b = 1 + self.best_successes, 1 + self.best_failures
        return float(beta.ppf(0.025, a, b)), float(beta.ppf(0.975, a, b))

    def line(self) -> str:
        best = "-"
        if self.best_node is not None:
            low, high = self.best_interval
            best = (
                f"{self.best_node} {self.best_successes}/{self.best_successes + self.best_failures} "
                f"[{low:.2f}, {high:.2f}]"
            )
        eta = "-" if self.eta_s is None else f"{self.eta_s / 60:.1f} min"
        jobs = ", ".join(f"{k} {n}" + (f":{t}" if t else "") for k, n, t in self.in_flight) or "none"
        heldout = f"  held-out {self.heldout_scored}/{self.heldout_total}" if self.heldout_total else ""
        return (
            f"evals {self.evaluations_used}/{self.evaluations_budget}{heldout}  nodes {self.nodes_valid} "
            "valid"
            f" {self.nodes_invalid} invalid  best {best}  tokens {self.tokens}  ${self.cost_usd:.2f}"
            f"  {self.cpu_hours:.2f} CPU-h"
            f"  elapsed {self.elapsed_s / 60:.1f} min  eta {eta}  in flight: {jobs}"
        )


class ProgressSink(Protocol):
    def update(self, snapshot: Snapshot) -> None: ...


class LineProgress:
    """A plain line when something changes (at most one every `min_interval_s`; a change held back is
    printed when due), and a heartbeat line every `heartbeat_s` while nothing does, for logs and pipes.

    Elapsed time and the estimate left are not changes: they move on every update, and a log of them
    alone would be a line every few seconds, all day."""

    def __init__(
        self, stream=None, min_interval_s: float = 5.0, clock=time.monotonic, heartbeat_s: float = 300.0
    ) -> None:
        self._stream = stream or sys.stderr
        self._interval = min_interval_s
        self._heartbeat = heartbeat_s
        self._clock = clock
        self._last_time: float | None = None
        self._last_state = ""

    def update(self, snapshot: Snapshot) -> None:
        state = replace(snapshot, elapsed_s=0.0, eta_s=None).line()  # what changed, not how long it has been
        now = self._clock()
        since = None if self._last_time is None else now - self._last_time
        changed = state != self._last_state and (since is None or since >= self._interval)
        heartbeat = since is not None and since >= self._heartbeat
        if snapshot.final or changed or heartbeat:
            print(snapshot.line(), file=self._stream, flush=True)
            self._last_time, self._last_state = now, state


class RichProgress:
    """A live table for a terminal; use as a context manager around the run.

    While it is live, log records and Python warnings (Docker's among them) are printed through
    its console, above the table, instead of raw onto stderr through the middle of it."""

    def __init__(self, console: Console | None = None) -> None:
        self._console = console or Console(stderr=True)
        self._live = Live(console=self._console, refresh_per_second=2, transient=False)
        self._handler = RichHandler(console=self._console, level=logging.WARNING, show_path=False)

    def __enter__(self) -> Self:
        self._live.__enter__()
        logging.getLogger().addHandler(self._handler)
        logging.captureWarnings(True)
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        logging.captureWarnings(False)
        logging.getLogger().removeHandler(self._handler)
        self._live.__exit__(exc_type, exc, traceback)

    def update(self, snapshot: Snapshot) -> None:
        table = Table(show_header=False, box=None, pad_edge=False)
        low, high = snapshot.best_interval
        done = snapshot.best_successes + snapshot.best_failures
        eta = "-" if snapshot.eta_s is None else f"{snapshot.eta_s / 60:.1f} min"
        rows = [
            (
                "evaluations",
                f"{snapshot.evaluations_used} / {snapshot.evaluations_budget}"
                + (
                    f", held-out {snapshot.heldout_scored} / {snapshot.heldout_total}"
                    if snapshot.heldout_total
                    else ""
                ),
            ),
            ("nodes", f"{snapshot.nodes_valid} valid, {snapshot.nodes_invalid} invalid"),
            (
                "best belief",
                "-"
                if snapshot.best_node is None
                else (
                    f"node {snapshot.best_node}: {snapshot.best_successes}/{done} passed, 95% [{low:.2f}, "
                    f"{high:.2f}]"
                ),
            ),
            (
                "usage",
                f"{snapshot.tokens} tokens, ${snapshot.cost_usd:.2f}, {snapshot.cpu_hours:.2f} CPU-hours",
            ),
            ("time", f"{snapshot.elapsed_s / 60:.1f} min elapsed, eta {eta}"),
            (
                "in flight",
                "\n".join(f"{k} node {n}" + (f" on {t}" if t else "") for k, n, t in snapshot.in_flight)
                or "-",
            ),
        ]
        for name, value in rows:
            table.add_row(f"[bold]{name}[/]", value)
        self._live.update(table)


def make_progress(console: Console | None = None) -> LineProgress | RichProgress:
    """The live display on a terminal, a line log otherwise."""
    console = console or Console(stderr=True)
    return RichProgress(console) if console.is_terminal else LineProgress()
