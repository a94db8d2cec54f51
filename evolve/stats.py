"""Means and proportions with their 95 % intervals: one definition for `evolve bench` and `evolve compare`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats


@dataclass(frozen=True)
class Interval:
    """A mean and its 95 % confidence interval."""

    mean: float
    low: float
    high: float

    def to_json(self) -> dict:
        return {"mean": self.mean, "ci95": [self.low, self.high]}


def mean_ci95(values: Sequence[float]) -> Interval:
    """Mean ± t(0.975, n−1)·sd/√n; a single value has a zero-width interval."""
    data = np.asarray(values, dtype=float)
    mean = float(data.mean())
    if data.size < 2:
        return Interval(mean, mean, mean)
    half = float(stats.t.ppf(0.975, data.size - 1) * data.std(ddof=1) / np.sqrt(data.size))
    return Interval(mean, mean - half, mean + half)


def proportion_ci95(successes: int, trials: int) -> Interval:
    """A pass rate with its Wilson score 95 % interval (sound at small n and near 0 or 1)."""
    ci = stats.binomtest(successes, trials).proportion_ci(0.95, method="wilson")
    return Interval(successes / trials, float(ci.low), float(ci.high))
