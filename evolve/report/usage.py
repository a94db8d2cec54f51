"""Tokens, dollars and CPU-hours by role over time.

Tokens and dollars come from the recorded model exchanges (`exchanges/job-N.jsonl`, written by the
host-side gateway, one line per request with its role and usage); CPU-hours from the job rows: a
finished job's wall time times the sandbox's CPU quota, by job kind (expansions run the diagnose and
modify roles, evaluations the solve role).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from evolve.archive.compute import cpu_hours, sandbox_cpus
from evolve.archive.records import Job
from evolve.archive.store import Run
from evolve.archive.vocab import JobState
from evolve.report.exchanges import exchange_rows

POINTS = 200
"""Points per series kept (evenly spaced over the records)."""


@dataclass(frozen=True)
class Series:
    """A cumulative series: hours since the run's start and the running total then."""

    hours: list[float] = field(default_factory=list)
    totals: list[float] = field(default_factory=list)


@dataclass(frozen=True)
class Usage:
    tokens: dict[str, Series] = field(default_factory=dict)
    dollars: dict[str, Series] = field(default_factory=dict)
    cpu_hours: dict[str, Series] = field(default_factory=dict)
    exchanges: int = 0
    """Model requests read; 0 for a run without recorded exchanges (an imported DGM run)."""
    prompt_cache: dict[str, tuple[int, int]] = field(default_factory=dict)
    """Per role: prompt tokens sent and, of them, those the server read from its prompt cache
    (`cached_prompt_tokens`: a hosted provider's cache, or the embedded server's saved contexts)."""

    def cache_hit_rate(self, role: str) -> float:
        prompt, cached = self.prompt_cache.get(role, (0, 0))
        return cached / prompt if prompt else 0.0


def _cumulative(events: Iterable[tuple[float, str, float]], start: float) -> dict[str, Series]:
    by_role: dict[str, list[tuple[float, float]]] = {}
    for when, role, amount in sorted(events):
        points = by_role.setdefault(role, [])
        points.append((when, (points[-1][1] if points else 0.0) + amount))
    result = {}
    for role, points in sorted(by_role.items()):
        step = max(1, len(points) // POINTS)
        kept = points[::step] if points[-1] in points[::step] else [*points[::step], points[-1]]
        result[role] = Series([max(t - start, 0.0) / 3600 for t, _ in kept], [v for _, v in kept])
    return result


Events = list[tuple[float, str, float]]


def _exchange_events(run: Run) -> tuple[Events, Events, int, dict[str, tuple[int, int]]]:
    tokens, dollars, count = [], [], 0
    cache: dict[str, tuple[int, int]] = {}
    directory = run.path / "exchanges"
    for path in sorted(directory.glob("job-*.jsonl")) if directory.is_dir() else []:
        for row in exchange_rows(path):  # a cut line, or a row of another shape, is left out
            usage = (row.get("response") or {}).get("usage") or {}
            role, when = str(row.get("role", "?")), float(row.get("created", 0))
            tokens.append(
                (when, role, float(usage.get("prompt_tokens", 0) + usage.get("completion_tokens", 0)))
            )
            dollars.append((when, role, float(usage.get("cost_usd", 0.0))))
            prompt, cached = cache.get(role, (0, 0))
            cache[role] = (
                prompt + int(usage.get("prompt_tokens", 0)),
                cached + int(usage.get("cached_prompt_tokens", 0)),
            )
            count += 1
    return tokens, dollars, count, cache


def usage_over_time(run: Run, jobs: list[Job]) -> Usage:
    start = min((job.started for job in jobs), default=0.0)
    tokens, dollars, count, cache = _exchange_events(run)
    if tokens:
        start = min(start, min(t for t, _, _ in tokens)) if jobs else min(t for t, _, _ in tokens)
    cpus = sandbox_cpus(run)
    cpu = [
        (job.finished, job.kind, cpu_hours(job.finished - job.started, cpus))
        # as the budget counts
        for job in jobs
        if job.finished is not None and job.state != JobState.CANCELLED
    ]
    return Usage(
        _cumulative(tokens, start), _cumulative(dollars, start), _cumulative(cpu, start), count, cache
    )
