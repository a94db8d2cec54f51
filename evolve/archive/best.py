"""The run's final agent ("best"): one rule for `evolve run`, status, tree, show, report, notebooks
and export.

It is the run's own policy's `best` (`evolve.search.policies`; HGM's best belief by default: the
highest ε-quantile of Beta(1+s, 1+f) over valid nodes with at least k results), on the counts the
search keeps (`Run.tree()`: dev results, the run's search tasks, one per node and task), with the
run's number of search tasks so staged policies see their stages. Invalid nodes are never named.
The runner names its final agent by the same policy on the same counts (`Runner._finish`).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from evolve.archive.tree import CladeTree, recorded_tasks
from evolve.config import PolicyConfig
from evolve.errors import EvolveError
from evolve.search.policies import best_rule, policies_from_config
from evolve.search.view import SearchView

if TYPE_CHECKING:
    from evolve.archive.store import Run


@dataclass(frozen=True)
class Best:
    """The final agent: its id, its own counted dev results, its lineage (root first) and the rule."""

    node: str
    successes: int
    failures: int
    lineage: tuple[str, ...]
    rule: str

    @property
    def total(self) -> int:
        return self.successes + self.failures

    def line(self) -> str:
        """`best node 3 (5/7 dev, 0.71), lineage 0 → 1 → 3`."""
        rate = (
            f"{self.successes}/{self.total} dev, {self.successes / self.total:.2f}"
            if self.total
            else "no results"
        )
        return f"best node {self.node} ({rate}), lineage {' → '.join(self.lineage)}"


def _counts_view(tree: CladeTree, tasks: int) -> SearchView:
    """The view a policy's `best` reads (ids, parents, validity, own counts), built from counts alone."""
    ids = list(tree)
    position = {node: index for index, node in enumerate(ids)}
    own = [tree.own_counts(node) for node in ids]
    return SearchView(
        ids=tuple(ids),
        parent=np.array([-1 if (up := tree.parent(n)) is None else position[up] for n in ids]),
        valid=np.array([tree.is_valid(n) for n in ids], bool),
        successes=np.array([c.successes for c in own]),
        failures=np.array([c.failures for c in own]),
        evaluated=(frozenset(),) * len(ids),
        task_order=tuple(range(tasks)),
        budget=0,
        used=0,
    )


def best_of(tree: CladeTree, policy: PolicyConfig, tasks: Collection[str] | None) -> Best | None:
    """The policy's final agent on `tree` (`tasks`: the run's search tasks, None when unrecorded)."""
    if not len(tree):
        return None
    count = len(tasks) if tasks is not None else 0
    node = policies_from_config(policy)[policy.name].best(_counts_view(tree, count))
    if node is None:
        return None
    own = tree.own_counts(node)
    lineage = tuple(str(n) for n in reversed([node, *tree.ancestors(node)]))
    return Best(str(node), own.successes, own.failures, lineage, best_rule(policy))


def best_so_far(
    tree: CladeTree, policy: PolicyConfig, tasks: Collection[str] | None, steps: Sequence[int]
) -> list[str | None]:
    """The policy's final agent among the first `k + 1` nodes of `tree` (creation order), for each `k` of
    `steps`: the final rule applied to the nodes made so far, on the counts they hold now (the run's
    end). The rule is applied once per step to a prefix of one view, so a long run asks for fewer steps."""
    count = len(tasks) if tasks is not None else 0
    full, rule = _counts_view(tree, count), policies_from_config(policy)[policy.name]
    picks: list[str | None] = []
    for step in steps:
        end = step + 1
        prefix = SearchView(
            ids=full.ids[:end],
            parent=full.parent[:end],
            valid=full.valid[:end],
            successes=full.successes[:end],
            failures=full.failures[:end],
            evaluated=full.evaluated[:end],
            task_order=full.task_order,
            budget=0,
            used=0,
        )
        node = rule.best(prefix)
        picks.append(None if node is None else str(node))
    return picks


def run_best(run: Run, tree: CladeTree | None = None) -> Best | None:
    """The final agent of an open run (`tree`: its `Run.tree()` when the caller has it already)."""
    counted = run.tree(with_tasks=False) if tree is None else tree
    return best_of(counted, run.config.policy, recorded_tasks(run))


FINAL = "final"
"""What a node argument may say instead of an id (`RUN:final`, `evolve show RUN final`): the run's final
agent."""


def named_node(run: Run, name: str) -> str:
    """The id of the node `name` names: an id, or `final` (any case) for the run's final agent as `run_best`
    names it; a node the run does not have is named in the error."""
    if name.lower() == FINAL:
        best = run_best(run)
        if best is None:
            raise EvolveError(f"run {run.path} has no final agent (no valid node)")
        return best.node
    run.node(name)
    return name
