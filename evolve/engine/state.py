"""The runner's live picture of a run: the clade tree (with each node's evaluated tasks) and jobs in flight.

It is rebuilt from the archive on start (so resume is a query) and then updated in place as results
arrive. The tree is the one `CladeTree` (evolve.search.tree) and results count by the archive's one
rule (`evolve.archive.tree.count_result`), so `evolve status`, the summary and the notebooks show the
tree the search decided on. `view()` is incremental: array copies, no per-node objects.
"""

from __future__ import annotations

from collections.abc import Sequence

from evolve.archive.records import Evaluation, Node
from evolve.archive.store import Run
from evolve.archive.tree import CladeTree, count_result, record_tasks
from evolve.search import SearchView
from evolve.search.spend import Line, priced_view


class SearchState:
    """Nodes in creation order, counted results on the search split, and pending jobs."""

    def __init__(self, nodes: Sequence[Node], evaluations: Sequence[Evaluation], task_order: Sequence[str]):
        self.task_order = tuple(task_order)
        self._tasks = frozenset(self.task_order)
        self.tree = CladeTree(capacity=max(len(nodes), 64))
        self.pending_evaluations: dict[int, tuple[str, str]] = {}
        self.pending_expansions: dict[int, str] = {}
        for node in nodes:
            self.add_node(node)
        for evaluation in evaluations:
            self.add_result(evaluation.node, evaluation.task, evaluation.outcome)

    @classmethod
    def from_run(cls, run: Run, task_order: Sequence[str]) -> SearchState:
        """The state of a writer's run; records the search's task set so the archive's views count alike."""
        record_tasks(run, task_order)
        return cls(run.nodes(), run.evaluations(split="dev"), task_order)

    @property
    def used(self) -> int:
        """Results counted: the evaluation budget's n."""
        return self.tree.results

    def add_node(self, node: Node) -> None:
        self.tree.add_node(node.id, node.parent, valid=node.valid)

    def add_result(self, node: str, task: str, outcome: str) -> bool:
        """Count a search-split result; False (not counted) for infra, repeats and foreign tasks."""
        return count_result(self.tree, node, task, outcome, self._tasks)

    def invalidate(self, node: str) -> None:
        """Follow `Run.invalidate` (the archive's row is the record; this is the live picture)."""
        self.tree.invalidate(node)

    def evaluated(self, node: str) -> frozenset[str]:
        return self.tree.evaluated(node)

    def priced_view(self, lines: Sequence[Line], expansions_left: int | None = None) -> SearchView:
        """The view a policy decides on: the budget that binds among `lines`, with the jobs in flight
        priced (`evolve.search.spend.priced_view`, the code the search benchmark drives too)."""
        return priced_view(
            self.tree,
            self.task_order,
            lines,
            list(self.pending_evaluations.values()),
            list(self.pending_expansions.values()),
            expansions_left,
        )

    def view(self, budget: int, expansions_left: int | None = None) -> SearchView:
        """An unpriced view on `budget` evaluations (the final agent, progress, benchmarks of speed)."""
        return self.tree.view(
            self.task_order,
            budget,
            pending_evaluations=self.pending_evaluations.values(),
            pending_expansions=self.pending_expansions.values(),
            expansions_left=expansions_left,
        )
