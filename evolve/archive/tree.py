"""The in-memory clade tree with incremental clade counts.

`S(a) = Σ s(a')` and `F(a) = Σ f(a')` over the clade `C(a)`: a and all its descendants (DESIGN.md §5).
A result on node x adds to x's own counts and to the clade counts of x and each ancestor, so an
update costs O(depth). Own counts and clade counts are separate integers: computing or reading a
clade estimate never touches a node's own results (the public HGM code aliases the two lists).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import networkx as nx

from evolve.archive.records import Evaluation, Node, counts_as


@dataclass(frozen=True)
class Counts:
    """Successes and failures."""

    successes: int = 0
    failures: int = 0

    @property
    def total(self) -> int:
        return self.successes + self.failures

    @property
    def mean(self) -> float | None:
        return self.successes / self.total if self.total else None


class CladeTree:
    """Parent links, validity, own counts `s, f` and clade counts `S, F` per node."""

    def __init__(self) -> None:
        self._parent: dict[str, str | None] = {}
        self._children: dict[str, list[str]] = {}
        self._valid: dict[str, bool] = {}
        self._own: dict[str, list[int]] = {}
        self._clade: dict[str, list[int]] = {}

    @classmethod
    def from_records(cls, nodes: Iterable[Node], evaluations: Iterable[Evaluation]) -> CladeTree:
        """Build from archive rows; nodes must come parents first (creation order)."""
        tree = cls()
        for node in nodes:
            tree.add_node(node.id, node.parent, valid=node.valid)
        for evaluation in evaluations:
            tree.record(evaluation.node, evaluation.outcome)
        return tree

    def add_node(self, node: str, parent: str | None = None, *, valid: bool = True) -> None:
        if node in self._parent:
            raise ValueError(f"node {node!r} is already in the tree")
        if parent is not None and parent not in self._parent:
            raise KeyError(f"parent {parent!r} of node {node!r} is not in the tree")
        self._parent[node] = parent
        self._children[node] = []
        self._valid[node] = valid
        self._own[node] = [0, 0]
        self._clade[node] = [0, 0]
        if parent is not None:
            self._children[parent].append(node)

    def record(self, node: str, outcome: str) -> None:
        """Count one evaluation outcome of `node` (infra outcomes do not count)."""
        success = counts_as(outcome)
        if success is not None:
            self.record_result(node, success)

    def record_result(self, node: str, success: bool) -> None:
        """Add one success or failure to `node` and to the clade counts of it and its ancestors."""
        index = 0 if success else 1
        self._own[node][index] += 1
        current: str | None = node
        while current is not None:
            self._clade[current][index] += 1
            current = self._parent[current]

    def own_counts(self, node: str) -> Counts:
        successes, failures = self._own[node]
        return Counts(successes, failures)

    def clade_counts(self, node: str) -> Counts:
        """`(S(a), F(a))`: successes and failures summed over the clade of `node`."""
        successes, failures = self._clade[node]
        return Counts(successes, failures)

    def parent(self, node: str) -> str | None:
        return self._parent[node]

    def children(self, node: str) -> tuple[str, ...]:
        return tuple(self._children[node])

    def is_valid(self, node: str) -> bool:
        return self._valid[node]

    def invalidate(self, node: str) -> None:
        """Mark a node invalid after the fact (its results stay counted; no policy grows it further)."""
        if node not in self._valid:
            raise KeyError(f"node {node!r} is not in the tree")
        self._valid[node] = False

    def ancestors(self, node: str) -> list[str]:
        """From the parent up to the root."""
        chain = []
        current = self._parent[node]
        while current is not None:
            chain.append(current)
            current = self._parent[current]
        return chain

    def descendants(self, node: str) -> list[str]:
        """All nodes below `node`, depth first."""
        found: list[str] = []
        stack = list(reversed(self._children[node]))
        while stack:
            current = stack.pop()
            found.append(current)
            stack.extend(reversed(self._children[current]))
        return found

    def depth(self, node: str) -> int:
        return len(self.ancestors(node))

    @property
    def roots(self) -> list[str]:
        return [node for node, parent in self._parent.items() if parent is None]

    def __contains__(self, node: object) -> bool:
        return node in self._parent

    def __iter__(self) -> Iterator[str]:
        return iter(self._parent)

    def __len__(self) -> int:
        return len(self._parent)

    def to_networkx(self) -> nx.DiGraph:
        """A directed graph parent → child, with own and clade counts as node attributes."""
        graph = nx.DiGraph()
        for node in self._parent:
            own, clade = self.own_counts(node), self.clade_counts(node)
            graph.add_node(
                node,
                valid=self._valid[node],
                successes=own.successes,
                failures=own.failures,
                clade_successes=clade.successes,
                clade_failures=clade.failures,
            )
        for node, parent in self._parent.items():
            if parent is not None:
                graph.add_edge(parent, node)
        return graph
