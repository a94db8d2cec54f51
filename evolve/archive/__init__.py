"""The clade archive: agent code in git, results in SQLite, the in-memory clade tree, frames, bundles."""

from evolve.archive.frames import evaluations_frame, nodes_frame
from evolve.archive.lineage import export_lineage, import_bundle
from evolve.archive.records import OUTCOMES, Evaluation, Job, Node, Outcome
from evolve.archive.store import NodeNotFound, Run, RunNotFound
from evolve.archive.tree import CladeTree, Counts

__all__ = [
    "OUTCOMES",
    "CladeTree",
    "Counts",
    "Evaluation",
    "Job",
    "Node",
    "NodeNotFound",
    "Outcome",
    "Run",
    "RunNotFound",
    "evaluations_frame",
    "export_lineage",
    "import_bundle",
    "nodes_frame",
]
