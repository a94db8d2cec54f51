"""A plan as a table (`evolve plan`), as one line (`evolve run`), and as JSON (`evolve plan --json`)."""

from __future__ import annotations

from typing import Any

from evolve.plan.types import Plan, Tokens


def _tokens(tokens: Tokens) -> str:
    return f"{tokens.total:,.0f} ({tokens.input:,.0f} in, {tokens.output:,.0f} out)"


def _disk(plan: Plan) -> str:
    images = plan.images
    count = len(images.names) + images.unnamed
    return f"{count} image(s), {images.disk_gb_low:,.1f}-{images.disk_gb_high:,.1f} GB"


def wall_clock(hours: float) -> str:
    """Hours as a person reads them: minutes under an hour ("~6 min", not "~0.1 h")."""
    return f"{hours * 60:,.0f} min" if hours < 1 else f"{hours:,.1f} h"


def summary_line(plan: Plan) -> str:
    """One line: what the run will start and what it will cost, at most."""
    counts = plan.counts
    missing = (
        f"; {len(plan.missing)} prerequisite(s) missing (evolve plan says which)" if plan.missing else ""
    )
    return (
        f"plan: {counts.evaluations:,} evaluations, {counts.expansions:,} expansions, "
        f"{plan.tokens.total:,.0f} tokens, ${plan.dollars:,.2f}, {plan.container_hours:,.1f} container-hours "
        f"({plan.cpu_hours:,.1f} CPU-hours, ~{wall_clock(plan.wall_hours)} at {plan.concurrency} in flight), "
        f"{_disk(plan)}{missing}"
    )


def render_table(plan: Plan) -> str:
    counts = plan.counts
    exact = "" if counts.exact_tasks else " (the published size: the dataset is not here to count)"
    lines = [
        (
            f"plan for run {plan.config_name}: suite {plan.suite}, policy {plan.policy} (at most, under the "
            "budgets)"
        ),
        f"  tasks         {counts.search_tasks} search, {counts.heldout_tasks} held out{exact}",
        (
            f"  evaluations   {counts.evaluations:,} ({counts.search_evaluations:,} search + "
            f"{counts.heldout_evaluations:,} held-out scoring of the final agent"
            f"{' and the seed' if counts.heldout_evaluations > counts.heldout_tasks else ''})"
        ),
        f"  expansions    {counts.expansions:,} ({counts.expansion_rule})",
        f"  per job       from {plan.profile.source}",
        (
            f"                evaluation {plan.profile.evaluation.total:,.0f} tokens, "
            f"{plan.profile.evaluation_minutes:,.1f} min; expansion {plan.profile.expansion.total:,.0f} "
            "tokens, "
            f"{plan.profile.expansion_minutes:,.1f} min"
        ),
    ]
    for role in plan.roles:
        price = f"${role.dollars:,.2f}" if role.priced else "no price known (counted as $0)"
        lines.append(f"  {role.role:<13} {role.model}: {_tokens(role.tokens)}, {price}")
    lines.append(f"  total         {_tokens(plan.tokens)}, ${plan.dollars:,.2f}")
    if plan.dollar_budget is not None and plan.dollars > plan.dollar_budget:
        lines.append(
            f"                (budget.dollars = ${plan.dollar_budget:,.2f} stops the run before that)"
        )
    lines += [
        (
            f"  compute       {plan.container_hours:,.1f} container-hours, {plan.cpu_hours:,.1f} CPU-hours, "
            f"~{wall_clock(plan.wall_hours)} wall-clock at {plan.concurrency} jobs in flight"
        ),
        f"  images        {_disk(plan)}: {', '.join(plan.images.names[:3])}"
        + (f" and {len(plan.images.names) - 3} more" if len(plan.images.names) > 3 else "")
        + (f" and {plan.images.unnamed} SWE-bench instance images" if plan.images.unnamed else ""),
    ]
    if plan.images.unnamed or any("sweb.eval" in name for name in plan.images.names):
        lines.append(
            "                (a SWE-bench instance image is 1-5 GB alone; instances of one repository "
            "share layers, about 0.4 GB each together)"
        )
    if not plan.checked:
        lines.append("  missing now   not checked (--offline)")
    elif plan.missing:
        lines.append("  missing now")
        lines += [f"    - {line}" for line in plan.missing]
    else:
        lines.append("  missing now   nothing")
    return "\n".join(lines)


def _tokens_json(tokens: Tokens) -> dict[str, float]:
    return {"input": round(tokens.input), "output": round(tokens.output), "total": round(tokens.total)}


def plan_json(plan: Plan) -> dict[str, Any]:
    counts = plan.counts
    return {
        "run": plan.config_name,
        "suite": plan.suite,
        "policy": plan.policy,
        "tasks": {
            "search": counts.search_tasks,
            "heldout": counts.heldout_tasks,
            "exact": counts.exact_tasks,
        },
        "evaluations": {
            "search": counts.search_evaluations,
            "heldout": counts.heldout_evaluations,
            "total": counts.evaluations,
        },
        "expansions": counts.expansions,
        "expansion_rule": counts.expansion_rule,
        "per_job": {
            "source": plan.profile.source,
            "evaluation_minutes": plan.profile.evaluation_minutes,
            "expansion_minutes": plan.profile.expansion_minutes,
        },
        "roles": [
            {
                "role": r.role,
                "model": r.model,
                "tokens": _tokens_json(r.tokens),
                "dollars": round(r.dollars, 4),
                "priced": r.priced,
            }
            for r in plan.roles
        ],
        "tokens": _tokens_json(plan.tokens),
        "dollars": round(plan.dollars, 4),
        "dollar_budget": plan.dollar_budget,
        "container_hours": round(plan.container_hours, 3),
        "cpu_hours": round(plan.cpu_hours, 3),
        "wall_hours": round(plan.wall_hours, 3),
        "concurrency": plan.concurrency,
        "images": {
            "names": list(plan.images.names),
            "unnamed": plan.images.unnamed,
            "disk_gb": [plan.images.disk_gb_low, plan.images.disk_gb_high],
        },
        "missing": list(plan.missing),
        "checked": plan.checked,
    }
