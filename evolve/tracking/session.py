"""A run's trackers while it runs: each event computed once on the runner's thread, sent by each tracker's
own thread, and a tracker that fails is dropped with one warning line while the run goes on.

The tracked run's id is kept in the run's `tracking/<tracker>.id`, so `evolve run --resume` continues the
same tracked run; `tracking/events.jsonl` keeps every step sent (the trackers receive it as an artifact).
"""

from __future__ import annotations

import dataclasses
import json
import logging
import queue
import shutil
import tempfile
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from evolve.archive.store import Run
from evolve.config import TrackingConfig
from evolve.engine.events import Finished, RunEvent
from evolve.tracking.metrics import EditCounter, event_step
from evolve.tracking.trackers import MlflowTracker, Tracker, WandbTracker

log = logging.getLogger(__name__)

DIRECTORY = "tracking"
"""The run directory's folder for the trackers' ids, the steps sent and W&B's offline files."""

CLOSE_WAIT_S = 120.0
"""How long the end of a run waits for a tracker to send what it still holds (a slow server)."""


def _last_step(events: Path) -> int:
    """The step of the last event an earlier session sent (-1: none)."""
    if not events.exists():
        return -1
    last = -1
    with events.open(encoding="utf-8") as lines:
        for line in lines:
            if line.strip():
                last = int(json.loads(line)["step"])
    return last


def _first_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {text[0] if text else ''}"


class Sender:
    """One tracker's thread: starts the tracked run, then sends each step in order. Its first failure
    is one warning line, and everything after it is dropped."""

    def __init__(self, tracker: Tracker, id_file: Path) -> None:
        self.tracker = tracker
        self.id_file = id_file
        self.failed: str | None = None
        self._work: queue.Queue[Callable[[Tracker], None] | None] = queue.Queue()
        self._thread = threading.Thread(
            target=self._loop, name=f"evolve-tracking-{tracker.name}", daemon=True
        )
        self._thread.start()

    def send(self, work: Callable[[Tracker], None]) -> None:
        if self.failed is None:
            self._work.put(work)

    def close(self, wait_s: float) -> None:
        self._work.put(None)
        self._thread.join(wait_s)
        if self._thread.is_alive():
            log.warning(
                "tracking: %s did not finish sending within %.0f s; the rest is not sent",
                self.tracker.name,
                wait_s,
            )

    def _loop(self) -> None:
        try:
            resume = self.id_file.read_text().strip() if self.id_file.is_file() else None
            tracked = self.tracker.start(resume or None)
            self.id_file.write_text(tracked + "\n")
        except Exception as error:  # noqa: BLE001 - a tracker library's failure: reported, the run goes on
            self._fail(error)
        while True:
            work = self._work.get()
            if work is None:
                return
            if self.failed is not None:
                continue
            try:
                work(self.tracker)
            except Exception as error:  # noqa: BLE001 - as above: a tracker never stops the run
                self._fail(error)

    def _fail(self, error: Exception) -> None:
        self.failed = _first_line(error)
        hint = " (pip install 'evolve[tracking]')" if isinstance(error, ImportError) else ""
        log.warning(
            "tracking: %s failed (%s)%s; the run goes on without it", self.tracker.name, self.failed, hint
        )


class Tracking:
    """The runner's `RunEvents`: each event becomes one `Step`, appended to `tracking/events.jsonl` and
    handed to every tracker's `Sender`."""

    def __init__(
        self,
        run: Run,
        trackers: Sequence[Tracker],
        *,
        cpus: float,
        artifacts: bool = True,
        wait_s: float = CLOSE_WAIT_S,
    ) -> None:
        self.run = run
        self.cpus = cpus
        self.artifacts = artifacts
        self.wait_s = wait_s
        self.directory = run.path / DIRECTORY
        self.directory.mkdir(exist_ok=True)
        self.events_file = self.directory / "events.jsonl"
        self.broken: str | None = None
        self._edits: EditCounter | None = None  # read at the first event, where a failure is a warning
        self._senders = [Sender(tracker, self.directory / f"{tracker.name}.id") for tracker in trackers]
        self._finished = False
        self._last_step = _last_step(self.events_file)

    def record(self, event: RunEvent) -> None:
        if self.broken is not None:
            return
        try:
            if self._edits is None:
                self._edits = EditCounter(self.run)
            step = event_step(self.run, event, self.cpus, self._edits)
        except Exception as error:  # noqa: BLE001 - reading the figures must not stop the run either
            self.broken = _first_line(error)
            log.warning(
                "tracking: reading the run's figures failed (%s); the run goes on untracked", self.broken
            )
            return
        # Two results recorded before the first of their events is read share a count; W&B merges what is
        # logged at one step, so each event takes the next step at least (a resume reads the last one sent).
        step = dataclasses.replace(step, step=max(step.step, self._last_step + 1))
        self._last_step = step.step
        with self.events_file.open("a", encoding="utf-8") as out:
            out.write(json.dumps(step.row(), sort_keys=True) + "\n")
        for sender in self._senders:
            sender.send(lambda tracker, step=step: tracker.log(step))  # type: ignore[misc]
        self._finished = self._finished or isinstance(event, Finished)

    def close(self) -> None:
        """Send the artifacts (once the run has finished), end each tracked run, wait for the senders."""
        with tempfile.TemporaryDirectory(prefix="evolve-tracking-") as tmp:
            files = self._artifacts(Path(tmp)) if self.artifacts and self._finished else []
            for sender in self._senders:
                if files:
                    sender.send(lambda tracker: tracker.upload(files))
                sender.send(lambda tracker: tracker.finish())
            for sender in self._senders:
                sender.close(self.wait_s)

    def _artifacts(self, staging: Path) -> list[Path]:
        from evolve.archive.lineage import export_lineage
        from evolve.report import write_report

        files = [self.events_file]
        makers: list[tuple[str, Callable[[Path], object]]] = [
            ("run.toml", lambda path: shutil.copyfile(self.run.path / "run.toml", path)),
            ("report.html", lambda path: write_report(self.run, path)),
            ("run.evolve.tar.gz", lambda path: export_lineage(self.run, path, with_logs=False)),
        ]
        for name, make in makers:
            try:
                make(staging / name)
            except Exception as error:  # noqa: BLE001 - an artifact not made is left out, not the others
                log.warning("tracking: %s not sent (%s)", name, _first_line(error))
                continue
            files.append(staging / name)
        return files


def trackers_of(config: TrackingConfig, run: Run) -> list[Tracker]:
    """The trackers `config` turns on, for `run`."""
    params = {
        "run_id": run.id,
        "suite": run.config.tasks.suite,
        "policy": run.config.policy.name,
        "seed": run.config.run.seed,
        "evaluations_budget": run.config.budget.evaluations,
    }
    found: list[Tracker] = []
    if config.wandb.enabled:
        found.append(WandbTracker(config.wandb, run.path / DIRECTORY / "wandb", run.path.name, params))
    if config.mlflow.enabled:
        found.append(MlflowTracker(config.mlflow, run.path.name, params))
    return found


@contextmanager
def open_tracking(
    config: TrackingConfig, run: Run, *, cpus: float, trackers: Sequence[Tracker] | None = None
) -> Iterator[Tracking | None]:
    """The run's `Tracking` while the block runs (None when `config` turns no tracker on); `trackers`
    replaces the configured ones (tests)."""
    chosen = list(trackers) if trackers is not None else trackers_of(config, run)
    if not chosen:
        yield None
        return
    tracking = Tracking(run, chosen, cpus=cpus, artifacts=config.artifacts)
    try:
        yield tracking
    finally:
        tracking.close()
