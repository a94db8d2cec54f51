"""Selection policies, pure and seeded (DESIGN.md §5): which node to expand or evaluate next."""

from evolve.search.dgm import DGMParams, DGMPolicy, GreedyPolicy, RandomPolicy
from evolve.search.hgm import HGMParams, HGMPolicy
from evolve.search.staged import StagedParams
from evolve.search.types import Action, Evaluate, Expand, NodeId, Policy, Stop, TaskId
from evolve.search.view import SearchView

__all__ = [
    "Action",
    "DGMParams",
    "DGMPolicy",
    "Evaluate",
    "Expand",
    "GreedyPolicy",
    "HGMParams",
    "HGMPolicy",
    "NodeId",
    "Policy",
    "RandomPolicy",
    "SearchView",
    "StagedParams",
    "Stop",
    "TaskId",
]
