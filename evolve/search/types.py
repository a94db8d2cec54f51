"""The policy's vocabulary: actions and the `Policy` protocol (docs/design.md §Search).

A policy maps `(view, rng)` to one action: `Expand(node)` (let the node's agent modify itself; the
child becomes a new node; `ExpandGroup`: one child of each node of a group, as one decision), `Evaluate(node,
task)` (run the node's agent on one task) or `Stop` (nothing to start now). `best(view)` names the final
agent.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, TypeAlias, runtime_checkable

import numpy as np

if TYPE_CHECKING:
    from evolve.search.view import SearchView

NodeId: TypeAlias = Hashable
TaskId: TypeAlias = Hashable


@dataclass(frozen=True)
class Expand:
    """Let `node`'s agent modify its own code; the result is a new child of `node`."""

    node: NodeId

    @property
    def parents(self) -> tuple[NodeId, ...]:
        """The nodes to expand, one child each: this node alone."""
        return (self.node,)


@dataclass(frozen=True)
class ExpandGroup(Expand):
    """A group iteration (GEA): one child of each node of `group`, dispatched as one unit (one search
    decision); `node` is `group[0]`, so code that reads an `Expand` sees the group's first parent."""

    group: tuple[NodeId, ...] = ()

    @classmethod
    def of(cls, parents: tuple[NodeId, ...]) -> ExpandGroup:
        if not parents:
            raise ValueError("a group iteration needs at least one parent")
        return cls(parents[0], tuple(parents))

    @property
    def parents(self) -> tuple[NodeId, ...]:
        return self.group or (self.node,)


@dataclass(frozen=True)
class Stop:
    """Nothing to start now. With jobs in flight the runner waits and asks again; else the run ends."""

    reason: str


@dataclass(frozen=True)
class Evaluate:
    """Run `node`'s agent on `task` and grade it (one unit of the evaluation budget B)."""

    node: NodeId
    task: TaskId


Action: TypeAlias = Expand | Evaluate | Stop
"""`ExpandGroup` is an `Expand`: the runner and the simulator expand each of its `parents`."""


@runtime_checkable
class Policy(Protocol):
    """A selection policy: pure, no I/O, every random choice from the `rng` passed in."""

    @property
    def name(self) -> str:
        """How the config names it (`policy.name`)."""
        ...

    def next_action(self, view: SearchView, rng: np.random.Generator) -> Action:
        """The next job to start on the tree snapshot `view`."""
        ...

    def best(self, view: SearchView) -> NodeId | None:
        """The final agent on `view` (None only for a tree without a valid node)."""
        ...
