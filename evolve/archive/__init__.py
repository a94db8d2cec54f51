"""The clade archive: agent code in git, results in SQLite, the in-memory clade tree, frames, bundles."""

from evolve.archive.lineage import (
    ImportProblem,
    ImportReport,
    export_lineage,
    import_bundle,
    import_dgm_run,
    import_hgm_run,
)
from evolve.archive.records import OUTCOMES, Evaluation, Job, Node, Outcome
from evolve.archive.store import NodeNotFound, Run, RunNotFound
from evolve.archive.tree import CladeTree, Counts

__all__ = [
    "OUTCOMES",
    "CladeTree",
    "Counts",
    "Evaluation",
    "ImportProblem",
    "ImportReport",
    "Job",
    "Node",
    "NodeNotFound",
    "Outcome",
    "Run",
    "RunNotFound",
    "evaluations_frame",
    "export_lineage",
    "import_bundle",
    "import_dgm_run",
    "import_hgm_run",
    "nodes_frame",
]


def __getattr__(name: str):
    # pandas is slow to import; load the frames module only when a frame is asked for.
    if name in ("nodes_frame", "evaluations_frame"):
        from evolve.archive import frames

        return getattr(frames, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
