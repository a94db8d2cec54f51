"""Selection policies, pure and seeded (docs/design.md §Search): which node to expand or evaluate next.

Names load on first use, so `evolve.config` can import the parameter classes (evolve.search.params)
without numpy and scipy.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

_HOMES = {
    "Action": "types", "Evaluate": "types", "Expand": "types", "NodeId": "types", "Policy": "types",
    "Stop": "types", "TaskId": "types", "DGMPolicy": "dgm", "GreedyPolicy": "dgm", "RandomPolicy": "dgm",
    "HGMPolicy": "hgm", "HGMCostPolicy": "costaware", "HGMCostParams": "params", "DGMParams": "params",
    "HGMParams": "params", "StagedParams": "params",
    "GEAParams": "params", "GEAPolicy": "gea", "ExpandGroup": "types",
    "SearchView": "view", "CladeTree": "tree", "Counts": "tree",
}  # fmt: skip

__all__ = [
    "Action", "CladeTree", "Counts", "DGMParams", "DGMPolicy", "Evaluate", "Expand", "ExpandGroup",
    "GEAParams", "GEAPolicy", "GreedyPolicy", "HGMCostParams", "HGMCostPolicy", "HGMParams", "HGMPolicy",
    "NodeId", "Policy", "RandomPolicy", "SearchView", "StagedParams", "Stop", "TaskId",
]  # fmt: skip


def __getattr__(name: str) -> object:
    if name not in _HOMES:
        raise AttributeError(f"module 'evolve.search' has no attribute {name!r}")
    return getattr(import_module(f"evolve.search.{_HOMES[name]}"), name)


if TYPE_CHECKING:
    from evolve.search.costaware import HGMCostPolicy
    from evolve.search.dgm import DGMPolicy, GreedyPolicy, RandomPolicy
    from evolve.search.gea import GEAPolicy
    from evolve.search.hgm import HGMPolicy
    from evolve.search.params import DGMParams, GEAParams, HGMCostParams, HGMParams, StagedParams
    from evolve.search.tree import CladeTree, Counts
    from evolve.search.types import Action, Evaluate, Expand, ExpandGroup, NodeId, Policy, Stop, TaskId
    from evolve.search.view import SearchView
