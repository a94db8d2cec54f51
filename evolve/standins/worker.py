"""A scripted worker for tests and engine benchmarks: no model, no sandbox, deterministic.

It is never the default; the runner gets it only where a test or `evolve bench` passes it in.
Each node has a pass probability derived from its id and the seed; an expansion copies the
parent's code and appends one line; an outcome is a seeded draw per (node, task).
"""

from __future__ import annotations

import threading
import zlib
from collections.abc import Collection

import numpy as np

from evolve.archive.codetree import tree_entries, tree_id
from evolve.archive.records import Job, Node
from evolve.archive.store import Run
from evolve.engine.jobs import EvaluationResult, ExpansionResult


class ScriptedWorker:
    """Deterministic stand-in for the real worker (sandboxes + model)."""

    def __init__(
        self,
        run: Run,
        *,
        seed: int = 0,
        delay_s: float = 0.0,
        invalid_every: int = 0,
        outcomes: dict[tuple[str, str], str] | None = None,
        tokens_per_job: int = 0,
        empty_patches: Collection[str] | None = None,
        expand_tokens: int | None = None,
    ) -> None:
        self.run = run
        self.seed = seed
        self.delay_s = delay_s
        self.invalid_every = invalid_every
        self.outcomes = outcomes or {}
        self.tokens_per_job = tokens_per_job
        # an expansion's, if other
        self.expand_tokens = tokens_per_job if expand_tokens is None else expand_tokens
        # None: no patch files; else each evaluation writes the job's diff.patch as the engine does,
        # empty for these nodes (DGM's compiled check reads it).
        self.empty_patches = None if empty_patches is None else frozenset(empty_patches)
        self.cancelled = threading.Event()
        self._lock = threading.Lock()
        self._expansions = 0

    def _draw(self, *keys: str) -> float:
        key = zlib.crc32("/".join((str(self.seed), *keys)).encode())
        return float(np.random.default_rng(key).random())

    def pass_probability(self, node_id: str) -> float:
        return 0.2 + 0.6 * self._draw("quality", node_id)

    def _wait(self) -> bool:
        """Sleep the job's delay; False when cancelled meanwhile."""
        return not self.cancelled.wait(self.delay_s) if self.delay_s else not self.cancelled.is_set()

    def evaluate(self, job: Job, node: Node, task: str, split: str) -> EvaluationResult:
        if not self._wait():
            return EvaluationResult("infra", detail="cancelled")
        outcome = self.outcomes.get((node.id, task))
        if outcome is None:
            outcome = "pass" if self._draw("eval", node.id, task) < self.pass_probability(node.id) else "fail"
        if self.tokens_per_job:
            self.run.add_usage(node.id, tokens=self.tokens_per_job, cost_usd=self.tokens_per_job * 1e-6)
        log_path = None
        if self.empty_patches is not None:
            log_dir = self.run.log_dir(job.id)
            (log_dir / "diff.patch").write_text(
                "" if node.id in self.empty_patches else f"+ {node.id} {task}\n"
            )
            log_path = str(log_dir)
        return EvaluationResult(
            outcome, duration_s=self.delay_s, tokens=self.tokens_per_job, log_path=log_path
        )

    def expand(self, job: Job, node: Node) -> ExpansionResult:
        if not self._wait():
            return ExpansionResult(None, valid=False, reason="cancelled")
        count = self._expansion_number(job)
        child = self.run.checkout(node.id, self.run.log_dir(job.id) / "child")
        with (child / "CHANGES").open("a") as changes:
            changes.write(f"job {job.id}: child of {node.id}\n")
        valid = not (self.invalid_every and count % self.invalid_every == 0)
        if self.expand_tokens:
            self.run.add_usage(node.id, tokens=self.expand_tokens, cost_usd=self.expand_tokens * 1e-6)
        return ExpansionResult(
            child,
            valid=valid,
            reason=None if valid else "scripted invalid child",
            instructions=f"scripted instructions {count}",
            tokens=self.expand_tokens,
            tree=tree_id(tree_entries(child)),
        )

    def _expansion_number(self, job: Job) -> int:
        """1 + the expansions decided before this one, from the archive's job rows: a re-run of an
        interrupted expansion (after a resume) gets the number the first run got."""
        if job.decision is None:
            with self._lock:
                self._expansions += 1
                return self._expansions
        decided = {
            j.decision
            for j in self.run.jobs()
            if j.kind == "expand" and j.decision is not None and j.decision <= job.decision
        }
        return len(decided)

    def cancel(self) -> None:
        self.cancelled.set()
