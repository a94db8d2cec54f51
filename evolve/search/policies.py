"""Every policy by its config name, with the parameters of a config's `policy` section.

One place: the runner (evolve/engine/launch.py), the benches and the archive's one "best" rule
(evolve/archive/best.py) all take their policy from here.
"""

from __future__ import annotations

from evolve.config import PolicyConfig
from evolve.search.costaware import HGMCostPolicy
from evolve.search.dgm import DGMPolicy, GreedyPolicy, RandomPolicy
from evolve.search.gea import GEAPolicy
from evolve.search.hgm import HGMPolicy
from evolve.search.types import Policy


def policies_from_config(section: PolicyConfig) -> dict[str, Policy]:
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


def best_rule(section: PolicyConfig) -> str:
    """The configured policy's rule for the final agent ("best belief"), in words."""
    if section.name in ("hgm", "hgm_cost"):
        params = section.hgm if section.name == "hgm" else section.hgm_cost
        return (f"{section.name.upper()}'s best belief: among valid nodes with at least {params.min_evals} counted "
                f"dev results (else at least 1), the highest {params.epsilon:g}-quantile of Beta(1+passed, "
                "1+failed), a pass rate it is confident of, not the luckiest one")
    return (f"{section.name.upper()}'s best: among valid nodes evaluated furthest (all dev tasks, else the last "
            "stage, else the first), the highest mean pass rate; ties go to the older node")
