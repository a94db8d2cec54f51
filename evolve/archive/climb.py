"""The climb: DGM's and HGM's progress figure as data, computed once from a recorded run.

Every node's score (its own dev pass rate, counted by the search's rule: `Run.tree()`) against the
expansion that made it (nodes in creation order; the seed at 0, any other root at the expansions made
before it), the best-so-far (the run's final rule, `evolve.archive.best.best_so_far`, applied to the
nodes made by each expansion, on the counts the run ended with, computed once: so the line starts on the
seed and ends on the run's final agent), the final agent's lineage, and the held-out scores of lineage
nodes where they were measured (`compare.counted_outcomes` on the held-out split). The report, `evolve
status` and the notebooks (`evolve.notebook.plots.plot_climb`) read these functions.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from evolve.archive.best import Best, best_of, best_so_far
from evolve.archive.compare import counted_outcomes
from evolve.archive.edits import edit_kind
from evolve.archive.records import Node
from evolve.archive.store import Run
from evolve.archive.tree import CladeTree, recorded_tasks
from evolve.archive.vocab import Split

STEPS = 1000
"""Expansions at which the final rule is applied, at most (evenly spaced, the last always among them):
each application reads a prefix of the run's view, so a run of 10,000 nodes stays quick."""


@dataclass(frozen=True)
class ClimbNode:
    """One node of the figure."""

    id: str
    expansion: int
    successes: int
    failures: int
    valid: bool
    on_lineage: bool

    @property
    def score(self) -> float | None:
        """Its own dev pass rate; None without a counted result."""
        total = self.successes + self.failures
        return self.successes / total if total else None


@dataclass(frozen=True)
class LineageStep:
    """One step of the final agent's lineage, root first."""

    node: str
    expansion: int
    successes: int
    failures: int
    heldout: tuple[int, int] | None
    """Held-out tasks passed and scored; None where the node was not measured on the held-out split."""
    edit: str
    """Its edit kind (`evolve.archive.edits`: code, prompt, lesson, cosmetic, none)."""
    instructions: str
    """What its expansion asked for ("" for a root); `evolve.meta.diagnose.edit_name` names it short."""

    def line(self, name: str) -> str:
        """`3 (expansion 2): dev 5/8 0.62, held-out 20/32 0.62, code: NAME`."""
        total = self.successes + self.failures
        dev = f"dev {self.successes}/{total} {self.successes / total:.2f}" if total else "dev -"
        held = (
            ""
            if self.heldout is None or not self.heldout[1]
            else f", held-out {self.heldout[0]}/{self.heldout[1]} {self.heldout[0] / self.heldout[1]:.2f}"
        )
        return f"{self.node} (expansion {self.expansion}): {dev}{held}, {self.edit}: {name}"


@dataclass(frozen=True)
class Climb:
    nodes: list[ClimbNode] = field(default_factory=list)
    steps: list[int] = field(default_factory=list)
    """The expansions at which the best-so-far is known (see `STEPS`)."""
    best: list[str | None] = field(default_factory=list)
    """At each of `steps`, the node the run's final rule names among the nodes made by then."""
    best_score: list[float | None] = field(default_factory=list)
    """That node's own dev pass rate."""
    lineage: list[LineageStep] = field(default_factory=list)
    rule: str = ""
    """The run's final rule, in words (`evolve.search.policies.best_rule`)."""


def _steps(expansions: int, limit: int) -> list[int]:
    if expansions + 1 <= limit:
        return list(range(expansions + 1))
    return sorted(set(np.linspace(0, expansions, limit, dtype=int).tolist()))


def _expansions(nodes: list[Node]) -> dict[str, int]:
    """Each node's expansion index: children made up to and including it, in creation order."""
    made, expansion_of = 0, {}
    for node in nodes:
        if node.parent is not None:
            made += 1
        expansion_of[node.id] = made
    return expansion_of


def run_climb(run: Run, steps: int = STEPS) -> Climb:
    """The figure's data of `run` (see the module docstring); an empty `Climb` for a run without nodes."""
    nodes = run.nodes()
    if not nodes:
        return Climb()
    tree = run.tree(with_tasks=False)
    tasks = recorded_tasks(run)
    final = best_of(tree, run.config.policy, tasks)
    lineage = set() if final is None else set(final.lineage)
    expansion_of = _expansions(nodes)  # creation order: parents first, as the tree holds them
    points = []
    for node in nodes:
        own = tree.own_counts(node.id)
        points.append(
            ClimbNode(
                node.id, expansion_of[node.id], own.successes, own.failures, node.valid, node.id in lineage
            )
        )
    # The rule reads a prefix of the nodes: an expansion's prefix ends at the last node made by then.
    last_index = {expansion_of[node.id]: index for index, node in enumerate(nodes)}
    at = _steps(expansion_of[nodes[-1].id], steps)
    picks = best_so_far(tree, run.config.policy, tasks, [last_index[step] for step in at])
    scores = {p.id: p.score for p in points}
    return Climb(
        points,
        at,
        picks,
        [None if pick is None else scores[pick] for pick in picks],
        lineage_steps(run, tree, final, expansion_of),
        "" if final is None else final.rule,
    )


def lineage_steps(
    run: Run,
    tree: CladeTree | None = None,
    final: Best | None = None,
    expansions: dict[str, int] | None = None,
) -> list[LineageStep]:
    """The final agent's lineage, root first, with each step's scores and edit (`evolve status`); the
    caller's tree, final agent and expansion indices when it has them."""
    counted = run.tree(with_tasks=False) if tree is None else tree
    best = best_of(counted, run.config.policy, recorded_tasks(run)) if final is None else final
    if best is None:
        return []
    expansion_of = _expansions(run.nodes()) if expansions is None else expansions
    steps = []
    for node_id in best.lineage:
        node, own = run.node(node_id), counted.own_counts(node_id)
        held = counted_outcomes(run, node_id, split=Split.HELDOUT)
        steps.append(LineageStep(node_id, expansion_of[node_id], own.successes, own.failures,
                                 (sum(held.values()), len(held)) if held else None,
                                 str(edit_kind(run, node_id)),
                                 "" if node.parent is None else node.instructions or ""))  # fmt: skip
    return steps
