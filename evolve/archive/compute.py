"""What a run's jobs cost: CPU-hours (the `[budget] cpu_hours` budget) and the price of an expansion
relative to an evaluation (what `evolve bench search --expand-cost-from RUN` measures).

Everything comes from the engine's own rows: job start and finish times (written by the runner,
never by agent code) and the gateway's token counts (evaluation rows and node totals).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from evolve.archive.records import Evaluation, Job, Node

if TYPE_CHECKING:
    from evolve.archive.store import Run


def cpu_hours(job_seconds: float, cpus_per_job: float) -> float:
    """Compute spent by evaluations and expansions alike: job wall seconds × the sandbox's CPUs, in hours."""
    return job_seconds * cpus_per_job / 3600.0


def sandbox_cpus(run: Run) -> float:
    """The CPUs of the run's sandboxes, from its run.toml (1 for a run imported without one)."""
    if not (run.path / "run.toml").exists():
        return 1.0
    return run.config.sandbox.cpus


def run_cpu_hours(run: Run, cpus_per_job: float, now: float | None = None) -> float:
    """The run's CPU-hours: every ended job's wall time, and with `now` (only the runner knows which jobs
    are live) jobs not ended up to `now`; a reader of a crashed run would otherwise count its dead jobs
    forever."""
    return cpu_hours(run.job_seconds(now), cpus_per_job)


@dataclass(frozen=True)
class ExpansionPrice:
    """Mean expansion cost over mean evaluation cost, by wall time and by tokens (None: not measurable)."""

    expansions: int
    evaluations: int
    by_wall_time: float | None
    by_tokens: float | None

    def to_json(self) -> dict:
        return {
            "expansions": self.expansions,
            "evaluations": self.evaluations,
            "by_wall_time": self.by_wall_time,
            "by_tokens": self.by_tokens,
        }


def _ratio(numerator: float, count_n: int, denominator: float, count_d: int) -> float | None:
    if not count_n or not count_d or denominator <= 0:
        return None
    return (numerator / count_n) / (denominator / count_d)


def expansion_tokens(nodes: Sequence[Node], evaluations: Sequence[Evaluation]) -> int:
    """The tokens of all expansions. The gateway charges an expansion's tokens to its parent node and an
    evaluation's to the evaluated node, and evaluation rows carry their own tokens, so expansion tokens
    are the node totals less the evaluation tokens."""
    return max(sum(n.tokens for n in nodes) - sum(e.tokens for e in evaluations), 0)


def expansion_price(
    jobs: Sequence[Job], nodes: Sequence[Node], evaluations: Sequence[Evaluation]
) -> ExpansionPrice:
    """From finished jobs (wall time) and the gateway's usage (tokens, `expansion_tokens`)."""
    done = [job for job in jobs if job.state == "finished" and job.finished is not None]
    expand = [job.finished - job.started for job in done if job.kind == "expand"]  # type: ignore[operator]
    evaluate = [job.finished - job.started for job in done if job.kind == "evaluate"]  # type: ignore[operator]
    evaluation_tokens = sum(e.tokens for e in evaluations)
    return ExpansionPrice(
        expansions=len(expand),
        evaluations=len(evaluate),
        by_wall_time=_ratio(sum(expand), len(expand), sum(evaluate), len(evaluate)),
        by_tokens=_ratio(
            expansion_tokens(nodes, evaluations), len(expand), evaluation_tokens, len(evaluations)
        ),
    )
