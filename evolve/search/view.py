"""`SearchView`: the immutable snapshot of the clade tree a policy decides on (docs/design.md §Search).

Nodes are positions `0..N-1` in creation order (parents before children); `ids[i]` is the external
id the actions carry. Everything per node is a read-only numpy array, so a policy's decision is a
few vectorised operations even on a tree of 10,000 nodes. The runner and the simulator get their
view from the one `CladeTree` (evolve.search.tree: `tree.view()`, array copies and the tree's own
incremental clade counts); a view built from plain lists (tests, hand-made trees) has its clade
counts computed here by the reverse pass of `estimates.clade_counts`, O(nodes).
"""

from __future__ import annotations

from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from evolve.search.estimates import clade_counts
from evolve.search.spend import Spend
from evolve.search.types import NodeId, TaskId


def _frozen(values: Sequence | np.ndarray, dtype: type, size: int, name: str) -> np.ndarray:
    """A read-only copy (never a view of the caller's array, so freezing it cannot affect theirs)."""
    array: np.ndarray = np.array(values, dtype=dtype)
    if array.shape != (size,):
        raise ValueError(f"SearchView.{name} has shape {array.shape}, expected ({size},)")
    array.setflags(write=False)
    return array


def _pending_counts(nodes: Sequence[int], size: int, name: str) -> np.ndarray:
    """Jobs in flight per node, read-only (zeros without a `bincount` when none: the simulator's case)."""
    if not nodes:
        counts = np.zeros(size, np.int64)
        counts.setflags(write=False)
        return counts
    return _frozen(np.bincount(nodes, minlength=size), np.int64, size, name)


@dataclass(frozen=True, eq=False)
class SearchView:
    """What a policy sees: the tree, each node's own results, the jobs in flight and the budget.

    - `parent[i]`: index of node i's parent, -1 for a root; parents come before children.
    - `successes`, `failures`: the node's own counts `s(a)`, `f(a)` (finished evaluations).
    - `evaluated[i]`: the task ids node i has finished (its `s + f` tasks).
    - `task_order`: the run-wide fixed random task order; "next task" means next in this order.
    - `budget` B (task evaluations) and `used` n (finished ones).
    - `pending_evaluations`: `(node index, task id)` per evaluation in flight.
    - `pending_expansions`: node index per expansion in flight (a child not born yet).
    - `clade_successes`, `clade_failures`: `S(a)`, `F(a)`; computed when not given.
    - `expansions_left`: expansions that may still start; at 0 a policy only evaluates.
    - `spend`: the binding budget in its unit, what is spent, in flight and reserved, and the
      measured price of an evaluation and of an expansion (`priced_view` sets it).
    """

    ids: tuple[NodeId, ...]
    parent: np.ndarray
    valid: np.ndarray
    successes: np.ndarray
    failures: np.ndarray
    evaluated: tuple[AbstractSet[TaskId], ...]
    task_order: tuple[TaskId, ...]
    budget: int
    used: int
    pending_evaluations: tuple[tuple[int, TaskId], ...] = ()
    pending_expansions: tuple[int, ...] = ()
    clade_successes: np.ndarray | None = None
    clade_failures: np.ndarray | None = None
    expansions_left: int | None = None
    """How many more expansions may start (the run's expansion budget); None: no limit."""
    solved: tuple[AbstractSet[TaskId], ...] = ()
    """Per node, the tasks of `evaluated` it passed (GEA's task-success vectors); empty when the
    builder does not say (a hand-made view), which only policies reading counts accept."""
    spend: Spend | None = None
    """The budget that binds, in its own unit, with the measured prices (evolve.search.spend); None
    for a view built without prices (then `budget` counts evaluations and expansions are free)."""
    pending_eval_counts: np.ndarray = field(init=False, repr=False)
    pending_expansion_counts: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        size = len(self.ids)
        put = object.__setattr__
        put(self, "ids", tuple(self.ids))
        put(self, "parent", _frozen(self.parent, np.int64, size, "parent"))
        put(self, "valid", _frozen(self.valid, bool, size, "valid"))
        put(self, "successes", _frozen(self.successes, np.int64, size, "successes"))
        put(self, "failures", _frozen(self.failures, np.int64, size, "failures"))
        put(self, "evaluated", tuple(self.evaluated))
        put(self, "task_order", tuple(self.task_order))
        put(self, "solved", tuple(self.solved))
        put(self, "pending_evaluations", tuple((int(n), t) for n, t in self.pending_evaluations))
        put(self, "pending_expansions", tuple(int(n) for n in self.pending_expansions))
        if len(self.evaluated) != size:
            raise ValueError(f"SearchView.evaluated has {len(self.evaluated)} entries for {size} nodes")
        if self.solved and len(self.solved) != size:
            raise ValueError(f"SearchView.solved has {len(self.solved)} entries for {size} nodes")
        if size and not (self.parent < np.arange(size)).all():
            raise ValueError("SearchView.parent: every parent must come before its child (index < child)")
        if self.budget < 0 or self.used < 0:
            raise ValueError("SearchView.budget and .used must not be negative")
        if self.clade_successes is None or self.clade_failures is None:
            clade_s, clade_f = clade_counts(self.parent, self.successes, self.failures)
        else:
            clade_s, clade_f = self.clade_successes, self.clade_failures
        put(self, "clade_successes", _frozen(clade_s, np.int64, size, "clade_successes"))
        put(self, "clade_failures", _frozen(clade_f, np.int64, size, "clade_failures"))
        put(
            self,
            "pending_eval_counts",
            _pending_counts([n for n, _ in self.pending_evaluations], size, "pending_evaluations"),
        )
        put(
            self,
            "pending_expansion_counts",
            _pending_counts(self.pending_expansions, size, "pending_expansions"),
        )

    @property
    def size(self) -> int:
        """Number of nodes (born ones; pending expansions not included)."""
        return len(self.ids)

    @property
    def in_flight_evaluations(self) -> int:
        return len(self.pending_evaluations)

    @property
    def budget_left(self) -> int:
        """Evaluations that may still be started: `B − n − in flight`."""
        return max(self.budget - self.used - self.in_flight_evaluations, 0)

    @cached_property
    def done(self) -> np.ndarray:
        """Finished evaluations per node, `s + f`."""
        done = self.successes + self.failures
        done.setflags(write=False)
        return done

    @cached_property
    def tasks_left(self) -> np.ndarray:
        """Tasks of `task_order` a node has neither finished nor in flight."""
        left = np.maximum(len(self.task_order) - self.done - self.pending_eval_counts, 0)
        left.setflags(write=False)
        return left

    @cached_property
    def valid_children(self) -> np.ndarray:
        """Number of valid children per node (DGM's `n_i`)."""
        mask = self.valid & (self.parent >= 0)
        counts = np.bincount(self.parent[mask], minlength=self.size).astype(np.int64)
        counts.setflags(write=False)
        return counts

    @cached_property
    def index(self) -> dict[NodeId, int]:
        """External id → position."""
        return {node: i for i, node in enumerate(self.ids)}

    def next_task(self, node: int) -> TaskId | None:
        """The first task in `task_order` that `node` has neither finished nor in flight."""
        done = self.evaluated[node]
        in_flight = {task for n, task in self.pending_evaluations if n == node}
        for task in self.task_order:
            if task not in done and task not in in_flight:
                return task
        return None
