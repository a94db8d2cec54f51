"""The runner's live picture of a run: the clade tree, per-node evaluated tasks, jobs in flight.

It is rebuilt from the archive on start (so resume is a query) and then updated in place as results
arrive; `view()` turns it into the immutable `SearchView` a policy decides on.
"""

from __future__ import annotations

from collections.abc import Sequence

from evolve.archive.records import Evaluation, Node, counts_as
from evolve.archive.store import Run
from evolve.archive.tree import CladeTree
from evolve.search import SearchView


class SearchState:
    """Nodes in creation order, own results on the search split, and pending jobs."""

    def __init__(self, nodes: Sequence[Node], evaluations: Sequence[Evaluation], task_order: Sequence[str]):
        self.task_order = tuple(task_order)
        self._tasks = set(self.task_order)
        self.tree = CladeTree()
        self._ids: list[str] = []
        self._index: dict[str, int] = {}
        self._evaluated: list[set[str]] = []
        self.pending_evaluations: dict[int, tuple[str, str]] = {}
        self.pending_expansions: dict[int, str] = {}
        self.used = 0
        for node in nodes:
            self.add_node(node)
        for evaluation in evaluations:
            self.add_result(evaluation.node, evaluation.task, evaluation.outcome)

    @classmethod
    def from_run(cls, run: Run, task_order: Sequence[str]) -> SearchState:
        return cls(run.nodes(), run.evaluations(split="dev"), task_order)

    def add_node(self, node: Node) -> None:
        self.tree.add_node(node.id, node.parent, valid=node.valid)
        self._index[node.id] = len(self._ids)
        self._ids.append(node.id)
        self._evaluated.append(set())

    def add_result(self, node: str, task: str, outcome: str) -> bool:
        """Count a search-split result; False (not counted) for infra, repeats and foreign tasks."""
        if counts_as(outcome) is None or task not in self._tasks:
            return False
        evaluated = self._evaluated[self._index[node]]
        if task in evaluated:
            return False
        evaluated.add(task)
        self.tree.record(node, outcome)
        self.used += 1
        return True

    def invalidate(self, node: str) -> None:
        """Follow `Run.invalidate` (the archive's row is the record; this is the live picture)."""
        self.tree.invalidate(node)

    def evaluated(self, node: str) -> frozenset[str]:
        return frozenset(self._evaluated[self._index[node]])

    def view(self, budget: int, expansions_left: int | None = None) -> SearchView:
        ids = self._ids
        own = [self.tree.own_counts(node) for node in ids]
        clade = [self.tree.clade_counts(node) for node in ids]
        return SearchView(
            ids=tuple(ids),
            parent=[-1 if (p := self.tree.parent(n)) is None else self._index[p] for n in ids],
            valid=[self.tree.is_valid(n) for n in ids],
            successes=[c.successes for c in own],
            failures=[c.failures for c in own],
            evaluated=[frozenset(done) for done in self._evaluated],
            task_order=self.task_order,
            budget=budget,
            used=self.used,
            pending_evaluations=[(self._index[n], t) for n, t in self.pending_evaluations.values()],
            pending_expansions=[self._index[n] for n in self.pending_expansions.values()],
            clade_successes=[c.successes for c in clade],
            clade_failures=[c.failures for c in clade],
            expansions_left=expansions_left,
        )
