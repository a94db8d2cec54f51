"""A run followed in an experiment tracker (Weights & Biases, MLflow) as it happens: `[tracking]` in the
config (evolve.config.TrackingConfig), the runner's events (evolve.engine.events) turned into steps
(`metrics`), sent by each tracker's own thread (`session`) through `trackers`."""

from evolve.tracking.metrics import Step
from evolve.tracking.session import Tracking, open_tracking, trackers_of
from evolve.tracking.trackers import MlflowTracker, Tracker, WandbTracker

__all__ = ["MlflowTracker", "Step", "Tracker", "Tracking", "WandbTracker", "open_tracking", "trackers_of"]
