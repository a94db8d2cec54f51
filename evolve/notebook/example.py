"""A small synthetic run built through the public `Run` API, for notebooks and tests without a real run.

Seeded and deterministic: a tree of agents whose code differs by one line per edit, each with a
hidden pass probability that drifts from its parent's, evaluated on a fixed task list; some
children fail validation. It looks like a run; it is not one (no model, no sandbox).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np

from evolve.archive.store import Run
from evolve.archive.vocab import JobKind
from evolve.config import RunConfig, RunSection

_EDITS = (
    "retry the edit tool when it reports no match",
    "show the failing test output before editing",
    "trim old tool results from the context",
    "run the tests after every edit",
    "read the whole file before replacing a function",
    "stop when the tests pass instead of using every step",
)


def build_example_run(dest: Path | str, *, nodes: int = 12, tasks: int = 8, seed: int = 0) -> Run:
    """Create a synthetic run at `dest` (open; the caller closes it)."""
    rng = np.random.default_rng(seed)
    run = Run.create(dest, RunConfig(run=RunSection(name="example", seed=seed)))
    task_ids = [f"task-{i:02d}" for i in range(tasks)]
    quality: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="evolve-example-") as tmp:
        code = Path(tmp)
        (code / "agent.py").write_text("STEPS = 10\n")
        (code / "prompts.py").write_text('SYSTEM = "You are a coding agent."\n')
        root = run.add_node(code, origin="seed")
        quality[root.id] = 0.35
        for index in range(1, nodes):
            parent = str(rng.choice([n for n in quality if run.node(n).valid]))
            run.checkout(parent, code)
            edit = _EDITS[index % len(_EDITS)]
            target = code / ("prompts.py" if index % 2 else "agent.py")
            target.write_text(target.read_text() + f"# edit {index}: {edit}\n")
            valid = rng.random() > 0.15
            job = run.start_job(JobKind.EXPAND, parent)
            child = run.add_node(
                code,
                parent=parent,
                origin="self_modify",
                instructions=f"Improve the agent: {edit}.",
                status="valid" if valid else "invalid",
                reason=None if valid else "agent tests fail",
                job_id=job.id,
            )
            run.add_usage(child.id, tokens=int(rng.integers(2_000, 9_000)), cost_usd=0.0)
            quality[child.id] = float(np.clip(quality[parent] + rng.normal(0.05, 0.12), 0.05, 0.95))
        for node in run.nodes():
            if not node.valid:
                continue
            for task in task_ids[: int(rng.integers(3, tasks + 1))]:
                job = run.start_job(JobKind.EVALUATE, node.id, task)
                outcome = (
                    "pass"
                    if rng.random() < quality[node.id]
                    else str(rng.choice(["fail", "fail", "timeout"]))
                )
                run.record_evaluation(
                    node.id,
                    task,
                    outcome,
                    duration_s=float(rng.uniform(5, 60)),
                    tokens=int(rng.integers(500, 3_000)),
                    job_id=job.id,
                )
            run.add_usage(node.id, tokens=0, cost_usd=float(rng.uniform(0.001, 0.02)))
    return run
