"""DGM's "compiled" check applied to a child from its recorded results (`[meta] compiled_check`).

The rule is `evolve.meta.validate.dgm_compiled`; this module finds its input in the archive. Whether
an attempt's patch was empty is read from the `diff.patch` the engine wrote in the job's log dir (the
diff of the copied-out work tree against the task's files, made on the host): nothing the agent
prints or leaves in its sandbox decides it.
"""

from __future__ import annotations

import logging
from collections.abc import Collection
from pathlib import PurePath

from evolve.archive.records import Evaluation
from evolve.archive.store import Run
from evolve.archive.tree import CladeTree, count_result
from evolve.config import RunConfig
from evolve.meta.validate import Verdict, dgm_compiled

log = logging.getLogger(__name__)

PATCH_FILE = "diff.patch"


def stage_size(config: RunConfig, search_tasks: int) -> int | None:
    """Tasks of a child's first evaluation stage when the check is on (see `MetaConfig.compiled_check`)."""
    if not config.meta.compiled_check:
        return None
    return max(min(config.policy.dgm.stages[0], search_tasks), 1)


def first_stage(run: Run, node_id: str, stage: int, search_tasks: Collection[str]) -> list[Evaluation] | None:
    """The node's first `stage` counted search results (one per task, in recording order, as the search
    counts them); None until it has that many."""
    tree, tasks = CladeTree(), frozenset(search_tasks)
    tree.add_node(node_id)
    counted = [
        e
        for e in run.evaluations(node_id, split="dev")
        if count_result(tree, node_id, e.task, e.outcome, tasks)
    ]
    return counted[:stage] if len(counted) >= stage else None


def patch_empty(run: Run, evaluation: Evaluation) -> bool | None:
    """Whether the engine's patch of this attempt is empty; None when the run has no record of it.

    Only the run's own `logs/job-N/` is read (the row's log_path names the job dir), never a path
    elsewhere."""
    if evaluation.log_path is None:
        return None
    patch = run.path / "logs" / PurePath(evaluation.log_path).name / PATCH_FILE
    try:
        return patch.stat().st_size == 0
    except FileNotFoundError:
        return None


def compiled_verdict(run: Run, node_id: str, stage: int, search_tasks: Collection[str]) -> Verdict | None:
    """DGM's verdict on the node's first stage; None when it cannot be judged yet (fewer results) or at
    all (a patch record is missing, e.g. pruned logs: a node is never failed on evidence the run lacks)."""
    results = first_stage(run, node_id, stage, search_tasks)
    if results is None:
        return None
    outcomes: dict[str, tuple[str, bool]] = {}
    for evaluation in results:
        empty = patch_empty(run, evaluation)
        if empty is None:
            log.warning(
                "node %s: no %s recorded for its result on %s; the compiled check skips it",
                node_id,
                PATCH_FILE,
                evaluation.task,
            )
            return None
        outcomes[evaluation.task] = (evaluation.outcome, empty)
    return dgm_compiled(outcomes, stage)
