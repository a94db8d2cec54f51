"""The experiment trackers a run can follow in: Weights & Biases and MLflow, behind one small protocol.

Each library is imported when its tracker starts (on the tracker's own thread, evolve.tracking.session),
never at import time: both are optional (`pip install 'evolve[tracking]'`) and heavy. Neither uses its
library's process-wide "active run": W&B's run object and MLflow's client are held by the tracker.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

from evolve.config import MlflowTracking, WandbTracking
from evolve.tracking.metrics import Step


class Tracker(Protocol):
    """One tracker's side of a run. Every method may raise: the session turns that into a warning."""

    name: str

    def start(self, resume_id: str | None) -> str:
        """Open the tracked run (`resume_id`: the one an earlier session of this run opened); its id."""
        ...

    def log(self, step: Step) -> None: ...

    def upload(self, files: Sequence[Path]) -> None:
        """Attach files to the tracked run (its config, report, bundle)."""
        ...

    def finish(self) -> None: ...


class WandbTracker:
    """Weights & Biases: online with `WANDB_API_KEY` (or `mode = "online"`), else offline files under
    `directory` that `wandb sync` uploads later."""

    name = "wandb"

    def __init__(
        self,
        config: WandbTracking,
        directory: Path,
        run_name: str,
        params: Mapping[str, Any],
        environ: Mapping[str, str] = os.environ,
    ) -> None:
        self.config = config
        self.directory = directory
        self.run_name = run_name
        self.params = dict(params)
        self.mode = (
            config.mode if config.mode != "auto" else "online" if environ.get("WANDB_API_KEY") else "offline"
        )
        self._run: Any = None

    def start(self, resume_id: str | None) -> str:
        import wandb

        self.directory.mkdir(parents=True, exist_ok=True)
        # console="off": W&B would otherwise capture the process's stdout and stderr (the run's display).
        settings = wandb.Settings(
            console="off", silent=True, x_disable_stats=True, x_disable_machine_info=True
        )
        self._run = wandb.init(
            project=self.config.project,
            entity=self.config.entity,
            dir=str(self.directory),
            id=resume_id,
            name=self.run_name,
            config=self.params,
            resume="allow",
            mode=self.mode,
            reinit="create_new",
            settings=settings,
        )
        return str(self._run.id)

    def log(self, step: Step) -> None:
        self._run.log({**step.metrics, **step.labels}, step=step.step)

    def upload(self, files: Sequence[Path]) -> None:
        import wandb

        artifact = wandb.Artifact(f"evolve-{self._run.id}", type="evolve-run")
        for path in files:
            artifact.add_file(str(path), name=path.name)
        self._run.log_artifact(artifact)

    def finish(self) -> None:
        self._run.finish()


class MlflowTracker:
    """MLflow, through a client of its own (`uri`: a tracking server or a local store)."""

    name = "mlflow"

    def __init__(self, config: MlflowTracking, run_name: str, params: Mapping[str, Any]) -> None:
        self.config = config
        self.run_name = run_name
        self.params = dict(params)
        self._client: Any = None
        self._run_id = ""

    def start(self, resume_id: str | None) -> str:
        from mlflow import MlflowClient
        from mlflow.entities import Param

        self._client = MlflowClient(tracking_uri=self.config.uri)
        if resume_id is not None:
            self._client.update_run(resume_id, status="RUNNING")
            self._run_id = resume_id
            return resume_id
        experiment = self._client.get_experiment_by_name(self.config.experiment)
        experiment_id = (
            experiment.experiment_id if experiment else self._client.create_experiment(self.config.experiment)
        )
        created = self._client.create_run(experiment_id, run_name=self.run_name)
        self._run_id = created.info.run_id
        self._client.log_batch(
            self._run_id, params=[Param(key, str(value)) for key, value in self.params.items()]
        )
        return self._run_id

    def log(self, step: Step) -> None:
        from mlflow.entities import Metric, RunTag

        stamp = int(time.time() * 1000)
        metrics = [Metric(key, value, stamp, step.step) for key, value in step.metrics.items()]
        # MLflow's metrics are numbers: an event's node, task and outcome are kept as the run's latest tags
        # here, and in full in the events.jsonl artifact.
        tags = [RunTag(key, value) for key, value in step.labels.items()]
        self._client.log_batch(self._run_id, metrics=metrics, tags=tags)

    def upload(self, files: Sequence[Path]) -> None:
        for path in files:
            self._client.log_artifact(self._run_id, str(path))

    def finish(self) -> None:
        self._client.set_terminated(self._run_id)
