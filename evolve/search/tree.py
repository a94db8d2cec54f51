"""`CladeTree`: the one clade tree, with incremental clade counts (docs/design.md §Search).

The runner's live state, the simulator, the archive's views (status, summary, frames) and the
notebooks all keep their tree in this class. Nodes get positions `0..N-1` in creation order (parents
before children) and keep the caller's ids. `S(a) = Σ s(a')`, `F(a) = Σ f(a')` over the clade `C(a)`:
a result on node x adds to x's own count and to the clade counts of x and each ancestor, O(depth).
Own and clade counts are separate arrays: reading a clade estimate never touches a node's own
results (the public HGM code aliases the two lists).

A node counts one result per task, the first (`record` returns False for a repeat). The columns are
numpy arrays that grow by doubling, and each node's set of evaluated tasks is replaced (never
changed in place) when it grows, so `view()` is a few array copies and one tuple of references:
a snapshot at O(nodes) machine work, with no per-node Python objects.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from evolve.search.spend import Spend
from evolve.search.view import SearchView

_COLUMNS = {
    "parent": np.int64,
    "valid": bool,
    "s": np.int64,
    "f": np.int64,
    "clade_s": np.int64,
    "clade_f": np.int64,
}


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
    """Parent links, validity, own counts `s, f`, clade counts `S, F` and evaluated tasks per node."""

    def __init__(self, capacity: int = 64) -> None:
        self._ids: list[Hashable] = []
        self._index: dict[Hashable, int] = {}
        self._up: list[int] = []  # parent positions as a list: walking ancestors is faster than numpy
        self._children: list[list[int]] = []
        self._evaluated: list[frozenset] = []
        self._solved: list[frozenset] = []  # the passed subset of each node's evaluated tasks
        self._columns = {name: np.zeros(max(capacity, 1), dtype) for name, dtype in _COLUMNS.items()}
        self._ids_tuple: tuple[Hashable, ...] | None = ()
        self.results = 0
        """Results counted (one per node and task)."""
        self._tasks_known = True

    # -- building ------------------------------------------------------------------------------

    def add_node(self, node: Hashable, parent: Hashable | None = None, *, valid: bool = True) -> int:
        """Add `node` under `parent` (None: a root); returns its position."""
        if node in self._index:
            raise ValueError(f"node {node!r} is already in the tree")
        if parent is not None and parent not in self._index:
            raise KeyError(f"parent {parent!r} of node {node!r} is not in the tree")
        position = len(self._ids)
        if position == len(self._columns["parent"]):
            self._columns = {name: np.concatenate([c, np.zeros_like(c)]) for name, c in self._columns.items()}
        up = -1 if parent is None else self._index[parent]
        self._columns["parent"][position] = up
        self._columns["valid"][position] = valid
        self._ids.append(node)
        self._index[node] = position
        self._up.append(up)
        self._children.append([])
        self._evaluated.append(frozenset())
        self._solved.append(frozenset())
        self._ids_tuple = None
        if up >= 0:
            self._children[up].append(position)
        return position

    def record(self, node: Hashable, task: Hashable, success: bool) -> bool:
        """Count `node`'s result on `task`; False (not counted) when the node has one on it already."""
        if not self._tasks_known:
            self._require_tasks()
        position = self._index[node]
        done = self._evaluated[position]
        if task in done:
            return False
        self._evaluated[position] = done | {task}
        if success:
            self._solved[position] = self._solved[position] | {task}
        self._columns["s" if success else "f"][position] += 1
        clade = self._columns["clade_s" if success else "clade_f"]
        while position >= 0:  # the node and each ancestor: O(depth)
            clade[position] += 1
            position = self._up[position]
        self.results += 1
        return True

    def record_counts(self, counts: Iterable[tuple[Hashable, int, int, frozenset | None]]) -> None:
        """Count results in bulk, as `record` once per (node, task) would: each item is a node, its
        successes and failures, and the tasks they are on (one result each). The archive's views
        aggregate results in SQL by the same rule and feed the totals here. Clade counts are summed
        once over the tree afterwards (O(nodes), however deep the tree). A task set of None leaves a
        tree of counts only: it no longer knows which tasks a node has done, so `record`, `evaluated`
        and `view` refuse (a repeat could not be told apart)."""
        own_s, own_f = self._columns["s"], self._columns["f"]
        for node, successes, failures, tasks in counts:
            position = self._index[node]
            if tasks is None:
                self._tasks_known = False
            elif len(tasks) != successes + failures or tasks & self._evaluated[position]:
                raise ValueError(f"node {node!r}: {successes + failures} results on {len(tasks)} new tasks")
            else:
                self._evaluated[position] = self._evaluated[position] | tasks
            own_s[position] += successes
            own_f[position] += failures
            self.results += successes + failures
        size = len(self._ids)
        clade_s, clade_f = own_s[:size].tolist(), own_f[:size].tolist()
        for position in range(size - 1, 0, -1):  # children come after their parents
            up = self._up[position]
            if up >= 0:
                clade_s[up] += clade_s[position]
                clade_f[up] += clade_f[position]
        self._columns["clade_s"][:size] = clade_s
        self._columns["clade_f"][:size] = clade_f

    def _require_tasks(self) -> None:
        if not self._tasks_known:
            raise ValueError(
                "this tree holds counts only (built without each node's tasks): "
                "it cannot count another result or make a search view"
            )

    def invalidate(self, node: Hashable) -> None:
        """Mark a node invalid after the fact (its results stay counted; no policy grows it further)."""
        if node not in self._index:
            raise KeyError(f"node {node!r} is not in the tree")
        self._columns["valid"][self._index[node]] = False

    # -- reading -------------------------------------------------------------------------------

    def position(self, node: Hashable) -> int:
        return self._index[node]

    def own_counts(self, node: Hashable) -> Counts:
        return self._counts(node, "s", "f")

    def clade_counts(self, node: Hashable) -> Counts:
        """`(S(a), F(a))`: successes and failures summed over the clade of `node`."""
        return self._counts(node, "clade_s", "clade_f")

    def _counts(self, node: Hashable, successes: str, failures: str) -> Counts:
        position = self._index[node]
        return Counts(int(self._columns[successes][position]), int(self._columns[failures][position]))

    def evaluated(self, node: Hashable) -> frozenset:
        """The tasks `node` has a counted result on."""
        self._require_tasks()
        return self._evaluated[self._index[node]]

    def parent(self, node: Hashable) -> Hashable | None:
        up = self._up[self._index[node]]
        return None if up < 0 else self._ids[up]

    def children(self, node: Hashable) -> tuple[Hashable, ...]:
        return tuple(self._ids[child] for child in self._children[self._index[node]])

    def is_valid(self, node: Hashable) -> bool:
        return bool(self._columns["valid"][self._index[node]])

    def ancestors(self, node: Hashable) -> list[Hashable]:
        """From the parent up to the root."""
        chain = []
        up = self._up[self._index[node]]
        while up >= 0:
            chain.append(self._ids[up])
            up = self._up[up]
        return chain

    def descendants(self, node: Hashable) -> list[Hashable]:
        """All nodes below `node`, depth first."""
        found: list[Hashable] = []
        stack = list(reversed(self._children[self._index[node]]))
        while stack:
            current = stack.pop()
            found.append(self._ids[current])
            stack.extend(reversed(self._children[current]))
        return found

    def depth(self, node: Hashable) -> int:
        return len(self.ancestors(node))

    @property
    def roots(self) -> list[Hashable]:
        return [node for node, up in zip(self._ids, self._up, strict=True) if up < 0]

    def __contains__(self, node: object) -> bool:
        return node in self._index

    def __iter__(self) -> Iterator[Hashable]:
        return iter(self._ids)

    def __len__(self) -> int:
        return len(self._ids)

    # -- the policy's snapshot -----------------------------------------------------------------

    def view(
        self,
        task_order: Sequence[Hashable] = (),
        budget: int = 0,
        *,
        pending_evaluations: Iterable[tuple[Hashable, Hashable]] = (),
        pending_expansions: Iterable[Hashable] = (),
        expansions_left: int | None = None,
        spend: Spend | None = None,
    ) -> SearchView:
        """The immutable `SearchView` a policy decides on; `used` is the results counted.

        Pending jobs name nodes by id. The arrays are copied (the view never sees a later result)."""
        self._require_tasks()
        size = len(self._ids)
        if self._ids_tuple is None:
            self._ids_tuple = tuple(self._ids)
        columns = {name: column[:size] for name, column in self._columns.items()}
        index = self._index
        return SearchView(
            ids=self._ids_tuple,
            parent=columns["parent"],
            valid=columns["valid"],
            successes=columns["s"],
            failures=columns["f"],
            evaluated=tuple(self._evaluated),
            task_order=tuple(task_order),
            budget=budget,
            used=self.results,
            pending_evaluations=tuple((index[node], task) for node, task in pending_evaluations),
            pending_expansions=tuple(index[node] for node in pending_expansions),
            clade_successes=columns["clade_s"],
            clade_failures=columns["clade_f"],
            expansions_left=expansions_left,
            solved=tuple(self._solved),
            spend=spend,
        )
