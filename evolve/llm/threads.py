"""How many CPU threads the embedded model uses, from the cores and what the run puts beside it.

llama.cpp's threads meet at a barrier after every operation, and a waiting thread spins. When the
machine has fewer free cores than the model has threads, one descheduled thread stalls the others:
on 2 cores with one busy competitor, generation fell from 112 to 3.8 tokens/s with 2 threads, and
kept 27.5 with 1 thread. So the model takes the cores the run leaves free, never more than
half the machine (other users, the engine's own process, Docker and graders compete too), and at
least one. Generation of a small model is bound by memory bandwidth and gains little past 8 threads.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

MAX_THREADS = 8


@dataclass(frozen=True)
class ThreadPlan:
    """Threads for generation (`threads`) and for reading prompts (`threads_batch`), and why."""

    threads: int
    threads_batch: int
    reason: str


def machine_cores() -> int:
    """The cores this process may run on (its affinity mask, else the CPU count)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def thread_plan(
    cores: int, beside: float = 0.0, threads: int | None = None, threads_batch: int | None = None
) -> ThreadPlan:
    """The plan for a machine of `cores` where the run keeps `beside` CPUs busy (sandbox CPUs x
    concurrency); `threads` / `threads_batch` from the config win over the policy."""
    free = int(cores - beside)
    chosen = max(1, min(free, cores // 2, MAX_THREADS))
    reason = (
        f"{cores} cores, {beside:g} beside the model (sandbox CPUs x concurrency): "
        f"{chosen} (at most half the cores, at least 1, at most {MAX_THREADS})"
    )
    if threads is not None or threads_batch is not None:
        reason += "; configured: " + ", ".join(
            f"{name} {value}"
            for name, value in (("threads", threads), ("threads_batch", threads_batch))
            if value is not None
        )
    return ThreadPlan(threads or chosen, threads_batch or threads or chosen, reason)
