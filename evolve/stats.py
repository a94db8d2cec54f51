"""Means and proportions with their 95 % intervals: one definition for `evolve bench`, `evolve compare`,
the run report and the end of `evolve run`."""

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


PAIRED_SMALL = 6
"""Fewer discordant tasks than this, and no paired difference can reach p < 0.05: the exact McNemar
test's smallest two-sided p with k discordant tasks is 2 · 0.5^k (0.0625 at k = 5, 0.03125 at 6)."""


def paired_difference_ci95(both: int, only_a: int, only_b: int, neither: int) -> Interval:
    """B's pass rate less A's on the same tasks, with Newcombe's hybrid score interval for paired
    proportions (Newcombe 1998, Stat. Med. 17:2635, method 10; Altman et al., Statistics with Confidence,
    p. 52): built from the two Wilson intervals and the corrected phi correlation of the 2x2 table. It stays
       within [-1, 1], is never zero-width for n >= 1, and
    holds at n = 2, where the t interval of the per-task differences does neither."""
    n = both + only_a + only_b + neither
    if n <= 0:
        raise ValueError("a paired difference needs at least one task")
    p_b, p_a = (both + only_b) / n, (both + only_a) / n
    b, a = proportion_ci95(both + only_b, n), proportion_ci95(both + only_a, n)
    margins = (both + only_b) * (only_a + neither) * (both + only_a) * (only_b + neither)
    cross = both * neither - only_a * only_b
    corrected = cross - n / 2 if cross > n / 2 else min(cross, 0)  # Newcombe's continuity-corrected phi
    phi = corrected / float(np.sqrt(margins)) if margins else 0.0
    down = np.sqrt(
        max((p_b - b.low) ** 2 - 2 * phi * (p_b - b.low) * (a.high - p_a) + (a.high - p_a) ** 2, 0.0)
    )
    up = np.sqrt(
        max((b.high - p_b) ** 2 - 2 * phi * (b.high - p_b) * (p_a - a.low) + (p_a - a.low) ** 2, 0.0)
    )
    difference = p_b - p_a
    return Interval(difference, max(-1.0, difference - float(down)), min(1.0, difference + float(up)))


def small_sample_note(tasks: int, discordant: int) -> str | None:
    """One line when the sample cannot tell two agents apart at 5 %, else None."""
    if discordant >= PAIRED_SMALL:
        return None
    return (
        f"too few tasks to tell the agents apart: {discordant} of {tasks} paired tasks differ, and fewer "
        "than "
        f"{PAIRED_SMALL} differing tasks cannot reach p < 0.05 whatever they show"
    )
