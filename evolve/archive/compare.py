"""Two agents on the same tasks, paired: `evolve compare A B`.

Each side is a node of a run (an `evolve eval` run holds one). A task counts for a side by the search's
rule (`counts_as`): its first result that is not `infra`; the comparison is over the tasks both sides
counted. Each pass rate gets a Wilson 95 % interval; the paired difference (B − A) Newcombe's hybrid
score interval for paired proportions (evolve.stats: within [-1, 1], sound at n = 2); and the exact
McNemar test the two-sided binomial p of the discordant tasks (those only one side passed).
"""

from __future__ import annotations

from dataclasses import dataclass

from scipy import stats

from evolve.archive.store import Run
from evolve.archive.vocab import counts_as
from evolve.errors import EvolveError
from evolve.stats import Interval, paired_difference_ci95, proportion_ci95, small_sample_note


@dataclass(frozen=True)
class Side:
    label: str
    passed: int
    total: int
    interval: Interval
    """The pass rate with its Wilson 95 % interval."""


@dataclass(frozen=True)
class Comparison:
    a: Side
    b: Side
    tasks: int
    only_a: list[str]
    """Tasks A passed and B did not."""
    only_b: list[str]
    difference: Interval
    """B's pass rate less A's, with the paired (Newcombe) 95 % interval."""
    mcnemar_p: float
    unpaired: int
    """Tasks one side counted and the other did not (left out)."""

    def small_sample_note(self) -> str | None:
        """One line when these tasks are too few to tell the two apart (evolve.stats)."""
        return small_sample_note(self.tasks, len(self.only_a) + len(self.only_b))

    def to_json(self) -> dict:
        return {
            "tasks": self.tasks, "unpaired": self.unpaired, "small_sample": self.small_sample_note(),
            **{key: {"label": side.label, "passed": side.passed, "total": side.total,
                     "pass_rate": side.interval.to_json()} for key, side in (("a", self.a), ("b", self.b))},
            "difference": self.difference.to_json(), "mcnemar_p": self.mcnemar_p,
            "only_a": self.only_a, "only_b": self.only_b,
        }  # fmt: skip


def counted_outcomes(run: Run, node: str, split: str | None = None) -> dict[str, bool]:
    """Task → passed, by the first result per task that counts (never `infra`)."""
    outcomes: dict[str, bool] = {}
    for evaluation in run.evaluations(node, split=split):
        success = counts_as(evaluation.outcome)
        if success is not None:
            outcomes.setdefault(evaluation.task, success)
    return outcomes


def compare(a: dict[str, bool], b: dict[str, bool], labels: tuple[str, str] = ("A", "B")) -> Comparison:
    tasks = sorted(a.keys() & b.keys())
    if not tasks:
        raise EvolveError(f"{labels[0]} and {labels[1]} have no counted task in common")
    sides = tuple(
        _side(label, [outcomes[t] for t in tasks]) for label, outcomes in zip(labels, (a, b), strict=True)
    )
    only_a = [t for t in tasks if a[t] and not b[t]]
    only_b = [t for t in tasks if b[t] and not a[t]]
    discordant = len(only_a) + len(only_b)
    p = float(stats.binomtest(len(only_b), discordant, 0.5).pvalue) if discordant else 1.0
    both = sum(1 for t in tasks if a[t] and b[t])
    difference = paired_difference_ci95(both, len(only_a), len(only_b), len(tasks) - both - discordant)
    return Comparison(
        sides[0], sides[1], len(tasks), only_a, only_b, difference, p, unpaired=len(a.keys() ^ b.keys())
    )


def _side(label: str, passed: list[bool]) -> Side:
    return Side(label, sum(passed), len(passed), proportion_ci95(sum(passed), len(passed)))
