"""Archive browsing for notebooks: a run as DataFrames and a graph, lineages, diffs and plots.

from evolve.notebook import load_run, lineage, show_diff, plot_tree
run = load_run("archive/my-run")          # a run directory, or a bundle from `evolve export`
run.nodes, run.evaluations, run.tree      # pandas, pandas, networkx
lineage(run, run.best)                    # root → best node: instructions and scores per step
show_diff(run, run.best)                  # rendered as a diff block in Jupyter
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Self

import networkx as nx
import pandas as pd

from evolve.archive import CladeTree, Run, evaluations_frame, import_bundle, nodes_frame
from evolve.archive.best import run_best
from evolve.archive.tree import to_networkx
from evolve.errors import EvolveError
from evolve.notebook.edits import focus_node, improvements
from evolve.notebook.example import build_example_run
from evolve.notebook.labels import short_labels
from evolve.notebook.plots import (
    cost_per_improvement,
    plot_best_so_far,
    plot_climb,
    plot_cost_per_improvement,
    plot_generations,
    plot_outcomes,
    plot_progress,
    plot_tree,
    plot_usage,
)
from evolve.search import HGMParams, HGMPolicy

__all__ = [
    "Diff",
    "LoadedRun",
    "best_belief",
    "build_example_run",
    "cost_per_improvement",
    "focus_node",
    "improvements",
    "lineage",
    "load_default_run",
    "load_run",
    "plot_best_so_far",
    "plot_climb",
    "plot_cost_per_improvement",
    "plot_generations",
    "plot_outcomes",
    "plot_progress",
    "plot_tree",
    "plot_usage",
    "short_labels",
    "show_diff",
]


@dataclass(frozen=True)
class LoadedRun:
    """An open run with its nodes and evaluations as frames and its clade tree as a graph."""

    run: Run
    nodes: pd.DataFrame
    """One row per node (index: node id): record, depth, own and clade pass counts and rates."""
    evaluations: pd.DataFrame
    """One row per graded attempt: node, task, split, attempt, outcome, duration, tokens."""
    tree: nx.DiGraph
    """Parent → child edges; node attributes: valid, own and clade successes/failures."""
    clade: CladeTree
    best: str | None
    """The final agent by the run's policy (`evolve.archive.best`: the same node as `evolve status`,
    `evolve tree` and the report), None for a tree without a valid node."""
    _scratch: tempfile.TemporaryDirectory | None = field(default=None, repr=False)

    @property
    def path(self) -> Path:
        return self.run.path

    def close(self) -> None:
        self.run.close()
        if self._scratch is not None:
            self._scratch.cleanup()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def best_belief(clade: CladeTree, epsilon: float = 0.25, min_evals: int = 5) -> str | None:
    """HGM's final agent (`HGMPolicy.best`, evolve/search/hgm.py): the argmax of the ε-quantile of Beta(1+s,
    1+f) over valid nodes with ≥ `min_evals` evaluations, else over valid evaluated nodes, else the first
    valid node."""
    best = HGMPolicy(HGMParams(epsilon=epsilon, min_evals=min_evals)).best(clade.view())
    return None if best is None else str(best)


RUN_ENV = "EVOLVE_NOTEBOOK_RUN"
"""Environment variable naming the run (directory or bundle) the notebooks open."""


REFERENCE_BUNDLE = "quickstart-embedded.evolve.tar.gz"
"""The reference lineage in `archive/published/` (the project's own quickstart run)."""
NOTEBOOK_BUNDLE = "humaneval-cpu.evolve.tar.gz"
"""The run the notebooks open by default: the most informative published one (13 nodes, 214
evaluations, the seed and the final agent both scored on 32 held-out tasks)."""


def default_run_path(start: Path | None = None) -> Path | None:
    """`$EVOLVE_NOTEBOOK_RUN`, else the notebooks' bundle in `archive/published/` (looked for from
    `start` upwards), else the reference bundle there, else None."""
    if os.environ.get(RUN_ENV):
        return Path(os.environ[RUN_ENV])
    start = (start or Path.cwd()).resolve()
    for directory in (start, *start.parents):
        for name in (NOTEBOOK_BUNDLE, REFERENCE_BUNDLE):
            if (bundle := directory / "archive" / "published" / name).is_file():
                return bundle
    return None


def load_default_run(start: Path | None = None) -> LoadedRun:
    """The run the notebooks show: see `default_run_path`; without one, a seeded example run."""
    path = default_run_path(start)
    if path is not None:
        return load_run(path)
    scratch = tempfile.TemporaryDirectory(prefix="evolve-notebook-")
    build_example_run(Path(scratch.name) / "example").close()
    return load_run(Path(scratch.name) / "example", _scratch=scratch)


def load_run(path: Path | str, *, _scratch: tempfile.TemporaryDirectory | None = None) -> LoadedRun:
    """Open a run directory, or import a bundle (`*.evolve.tar.gz`) into a scratch directory."""
    path = Path(path)
    scratch = _scratch
    if path.is_file():
        scratch = tempfile.TemporaryDirectory(prefix="evolve-notebook-")
        run = import_bundle(path, Path(scratch.name) / "run")
    elif path.is_dir():
        run = Run.open(path)
    else:
        raise EvolveError(f"{path}: neither a run directory nor a bundle file")
    clade = run.tree()
    final = run_best(run, clade)
    return LoadedRun(
        run=run,
        nodes=nodes_frame(run, tree=clade),
        evaluations=evaluations_frame(run),
        tree=to_networkx(clade),
        clade=clade,
        best=None if final is None else final.node,
        _scratch=scratch,
    )


def _as_run(run: LoadedRun | Run) -> Run:
    return run.run if isinstance(run, LoadedRun) else run


def _changed_files(diff: str) -> list[str]:
    return [line.split(" b/", 1)[-1] for line in diff.splitlines() if line.startswith("diff --git ")]


def lineage(run: LoadedRun | Run, node: str) -> pd.DataFrame:
    """Root → `node`, one row per step: what produced it (origin, instructions), files it changed,
    its own and clade scores, and the change of its own pass rate against its parent."""
    opened = _as_run(run)
    clade = run.clade if isinstance(run, LoadedRun) else opened.tree()
    chain = [opened.node(node)]
    while chain[-1].parent is not None:
        chain.append(opened.node(chain[-1].parent))
    rows = []
    for step in reversed(chain):
        own, total = clade.own_counts(step.id), clade.clade_counts(step.id)
        rows.append(
            {
                "node": step.id,
                "parent": step.parent,
                "origin": step.origin,
                "status": step.status,
                "instructions": step.instructions or "",
                "files_changed": ", ".join(_changed_files(opened.diff(step.id))) if step.parent else "",
                "successes": own.successes,
                "failures": own.failures,
                "pass_rate": own.mean,
                "clade_rate": total.mean,
            }
        )
    frame = pd.DataFrame(rows).set_index("node")
    frame["pass_rate"] = frame["pass_rate"].astype("float64")
    frame["clade_rate"] = frame["clade_rate"].astype("float64")
    frame["delta"] = frame["pass_rate"].diff()
    return frame


@dataclass(frozen=True)
class Diff:
    """A unified diff that Jupyter renders as a highlighted block (and `print` shows as text)."""

    node: str
    against: str
    text: str = field(repr=False)

    @property
    def files(self) -> list[str]:
        return _changed_files(self.text)

    def __str__(self) -> str:
        return self.text

    def _repr_markdown_(self) -> str:
        body = self.text or "(no change)\n"
        return f"**{self.node}** against {self.against}: {len(self.files)} file(s)\n\n```diff\n{body}```\n"


def show_diff(run: LoadedRun | Run, node: str, against: str = "parent") -> Diff:
    """The diff of `node` against its parent, the root (`"root"`) or another node id."""
    return Diff(node, against, _as_run(run).diff(node, against=against))
