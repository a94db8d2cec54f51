"""Every policy by its config name, with the parameters of a config's `policy` section.

One place: the runner (evolve/launch.py), the benches and the archive's one "best" rule
(evolve/archive/best.py) all take their policy from here.
"""

from __future__ import annotations

from typing import Protocol

from evolve.search.costaware import HGMCostPolicy
from evolve.search.dgm import DGMPolicy, GreedyPolicy, RandomPolicy
from evolve.search.gea import GEAPolicy
from evolve.search.hgm import HGMPolicy
from evolve.search.params import DGMParams, GEAParams, HGMCostParams, HGMParams
from evolve.search.types import Policy


class PolicySection(Protocol):
    """What the policies read of a config's `[policy]` section (evolve.config.PolicyConfig is one); the
    search layer stays below the config that loads it."""

    @property
    def name(self) -> str: ...
    @property
    def hgm(self) -> HGMParams: ...
    @property
    def hgm_cost(self) -> HGMCostParams: ...
    @property
    def dgm(self) -> DGMParams: ...
    @property
    def gea(self) -> GEAParams: ...


def default_policy(name: str) -> Policy:
    """A policy with its default parameters (evolve.search.params)."""
    makers = {
        "hgm": HGMPolicy,
        "dgm": DGMPolicy,
        "greedy": GreedyPolicy,
        "random": RandomPolicy,
        "hgm_cost": HGMCostPolicy,
        "gea": GEAPolicy,
    }
    if name not in makers:
        raise ValueError(f"unknown policy {name!r}; known: {', '.join(makers)}")
    return makers[name]()


def policies_from_config(section: PolicySection) -> dict[str, Policy]:
    """Every policy, with the parameters of the config's `policy` section."""
    staged = section.dgm.staged
    return {
        "hgm": HGMPolicy(section.hgm),
        "dgm": DGMPolicy(section.dgm),
        "greedy": GreedyPolicy(staged),
        "random": RandomPolicy(staged),
        "hgm_cost": HGMCostPolicy(section.hgm_cost),
        "gea": GEAPolicy(section.gea),
    }


def best_rule(section: PolicySection) -> str:
    """The configured policy's rule for the final agent ("best belief"), in words."""
    if section.name in ("hgm", "hgm_cost"):
        params = section.hgm if section.name == "hgm" else section.hgm_cost
        return (
            f"{section.name.upper()}'s best belief: the valid node with the highest "
            f"{params.epsilon:g}-quantile "
            f"of Beta(1+passed, 1+failed) among those with >= {params.min_evals} dev results (else >= 1)"
        )
    return (
        f"{section.name.upper()}'s best: the valid node with the highest mean pass rate among those "
        "evaluated "
        "furthest (all dev tasks, else the last stage, else the first); ties go to the older"
    )
