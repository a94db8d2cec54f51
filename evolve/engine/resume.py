"""What a resumed runner runs again: the jobs an interrupted session left, read from their rows.

A job row says what it is (kind, node, task, split, decision), so the work is re-queued exactly:
a search evaluation into the search, a held-out evaluation into the held-out scoring (never into
the search's counts or budget), an expansion as an expansion. Each interrupted job is re-run at
most once: a job whose id a later row names as its `requeue_of` is taken (`Run.start_job` refuses
a second re-run). Nothing is read back from a job's `detail` text.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass, field, replace

from evolve.archive.records import Job
from evolve.archive.store import Run
from evolve.archive.vocab import JobKind, JobState, Split


@dataclass
class Requeue:
    """Interrupted work: `search` runs first in the loop, `heldout` when the final agent is scored."""

    search: list[Job] = field(default_factory=list)
    heldout: list[Job] = field(default_factory=list)


def recover(
    run: Run,
    *,
    search_tasks: Collection[str],
    heldout_tasks: Collection[str],
    evaluated: Callable[[str], Collection[str]],
) -> Requeue:
    """Mark jobs a dead process left `started` as interrupted, and sort what must run again."""
    for job in run.jobs(JobState.STARTED):
        run.finish_job(job.id, JobState.CANCELLED, "interrupted")
    jobs = run.jobs()
    rerun = {job.requeue_of for job in jobs if job.requeue_of is not None}
    legacy_upto = _legacy_upto(run)
    queue = Requeue()
    for job in jobs:
        if job.state != JobState.CANCELLED or job.id in rerun:
            continue
        if job.kind == JobKind.EXPAND:
            queue.search.append(job)
            continue
        split = job.split
        if split is None and job.id <= legacy_upto:  # a v1 row: its task says which split it was
            split = (
                Split.HELDOUT
                if job.task in heldout_tasks
                else Split.DEV
                if job.task in search_tasks
                else None
            )
        if split == Split.DEV and job.task in search_tasks and job.task not in evaluated(job.node):
            queue.search.append(replace(job, split=Split.DEV))
        elif split == Split.HELDOUT and job.task in heldout_tasks:
            queue.heldout.append(replace(job, split=Split.HELDOUT))
        # anything else (a job of `evolve eval`, a task no longer configured) is not the search's
    return queue


def _legacy_upto(run: Run) -> int:
    try:
        return int(run.meta("legacy_jobs_upto"))
    except KeyError:
        return 0
