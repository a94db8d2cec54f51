"""`evolve plan`: what a configured run will need and cost, before it starts (docs/tasks.md, "Published setups
and `evolve plan`"). Counts (counts.py) times what one job uses (profiles.py), priced and timed
(estimate.py); what is missing now (prereqs.py); shown by render.py."""

from evolve.plan.estimate import make_plan
from evolve.plan.render import plan_json, render_table, summary_line
from evolve.plan.types import Counts, JobProfile, Plan, RoleCost, RoleTokens, Tokens

__all__ = [
    "Counts",
    "JobProfile",
    "Plan",
    "RoleCost",
    "RoleTokens",
    "Tokens",
    "make_plan",
    "plan_json",
    "render_table",
    "summary_line",
]
