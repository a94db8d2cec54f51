"""Which recorded results the search counts, and the archive's clade tree built by that one rule.

The tree is `evolve.search.tree.CladeTree`, the same class the runner's state and the simulator keep.
A result counts, here and in the runner alike (`count_result`), iff
- its outcome counts: pass is a success; fail, timeout and error are failures; infra never counts;
- its task is one of the run's search tasks (the runner's state records them in the run's meta; a run
  from before that record counts every task), so `evolve eval` results on other tasks stay out;
- the node has no counted result on that task yet: the first one counts, a repeat does not.
The split is the caller's query (`Run.tree(split="dev")`, the search split, by default).
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable
from typing import TYPE_CHECKING, Protocol

from evolve.archive.records import Evaluation, Node, counts_as
from evolve.search.tree import CladeTree, Counts

if TYPE_CHECKING:
    import networkx as nx

__all__ = ["SEARCH_TASKS_KEY", "CladeTree", "Counts", "build_tree", "count_result", "record_tasks",
           "recorded_tasks", "to_networkx"]  # fmt: skip

SEARCH_TASKS_KEY = "search_tasks"
"""The run meta key holding the search's task ids (a JSON list)."""


class _Meta(Protocol):
    def meta(self, key: str) -> str: ...

    def set_meta(self, key: str, value: str) -> None: ...


def count_result(tree: CladeTree, node: str, task: str, outcome: str, tasks: Collection[str] | None) -> bool:
    """Count one recorded result as the search does (see the module docstring); False when it does not
    count. `tasks` is the search's task set, None when unknown (every task counts)."""
    success = counts_as(outcome)
    if success is None or (tasks is not None and task not in tasks):
        return False
    return tree.record(node, task, success)


def build_tree(
    nodes: Iterable[Node], evaluations: Iterable[Evaluation], tasks: Collection[str] | None
) -> CladeTree:
    """The tree of archive rows, results counted by `count_result`; nodes parents first (creation order)."""
    tree = CladeTree()
    for node in nodes:
        tree.add_node(node.id, node.parent, valid=node.valid)
    for evaluation in evaluations:
        count_result(tree, evaluation.node, evaluation.task, evaluation.outcome, tasks)
    return tree


def recorded_tasks(run: _Meta) -> frozenset[str] | None:
    """The search tasks the run recorded; None for a run made before they were recorded."""
    try:
        return frozenset(json.loads(run.meta(SEARCH_TASKS_KEY)))
    except KeyError:
        return None  # an older run: every task counts, as its search counted them then


def record_tasks(run: _Meta, tasks: Collection[str]) -> None:
    """Record the search's task set (once; again only when a resumed run's set differs)."""
    if recorded_tasks(run) != frozenset(tasks):
        run.set_meta(SEARCH_TASKS_KEY, json.dumps(sorted(tasks)))


def to_networkx(tree: CladeTree) -> nx.DiGraph:
    """A directed graph parent → child, with own and clade counts as node attributes."""
    import networkx as nx  # slow to import; only notebooks ask for a graph

    graph: nx.DiGraph = nx.DiGraph()
    for node in tree:
        own, clade = tree.own_counts(node), tree.clade_counts(node)
        graph.add_node(node, valid=tree.is_valid(node), successes=own.successes, failures=own.failures,
                       clade_successes=clade.successes, clade_failures=clade.failures)  # fmt: skip
        if (parent := tree.parent(node)) is not None:
            graph.add_edge(parent, node)
    return graph
