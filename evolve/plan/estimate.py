"""The plan of a configured run: job counts times what one job uses, priced and timed.

tokens(role)    = evaluations x the evaluation's tokens of the role + expansions x the expansion's,
                  each job capped at `budget.job_tokens` per model channel (the gateway's cap); with
                  `[meta] candidates = k` an expansion's modify and solve (the gate's) tokens times k,
                  as each candidate has its own channels (an upper bound: sampling stops at the first
                  survivor)
dollars(role)   = input x the input price + output x the output price (no prompt-cache discount:
                  the plan is an upper bound); local models cost $0
container-hours = evaluations x evaluation minutes + expansions x expansion minutes (x k), over 60
CPU-hours       = container-hours x `sandbox.cpus` (as the `[budget] cpu_hours` budget counts them)
wall hours      = container-hours / `executor.concurrency`
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from evolve.config import MetaConfig, ModelConfig, RunConfig
from evolve.engine.costs import Priors
from evolve.engine.screen import KEPT
from evolve.llm.types import ROLES, Role
from evolve.models.pricing import known_price
from evolve.plan.counts import PlannedTasks, planned_tasks, run_counts
from evolve.plan.prereqs import missing_prerequisites
from evolve.plan.profiles import job_profile
from evolve.plan.types import Counts, Images, JobProfile, Plan, RoleCost, RoleTokens, Tokens

SWEBENCH_IMAGE_GB = (0.4, 5.0)
"""One SWE-bench instance image: 1-5 GB alone, but instances of one repository share their layers, so
together they take about 0.2-0.4 GB each (~100 GB for all 500 of Verified, ~25 GB for DGM's 60:
docs/benchmarks.md)."""
OTHER_IMAGE_GB = (0.3, 1.0)
"""evolve's own images (evolve-base is about 0.3 GB, evolve-polyglot:cpp 0.8 GB, all six languages more)."""
HOSTED = ("openai", "anthropic")


def role_tokens(
    role: Role, counts: Counts, profile: JobProfile, job_tokens: int, candidates: int = 1, reruns: int = 0
) -> Tokens:
    """The role's tokens over the run; each job's use of one channel is capped at `job_tokens`; an
    expansion's candidates each have their own modify and solve channels, and its `reruns` live solves
    (`rerun_solves`) cost what an evaluation's do."""
    per_evaluation = profile.evaluation.of(role).capped(job_tokens)
    per_expansion = (
        profile.expansion.of(role).capped(job_tokens).times(1 if role == "diagnose" else candidates)
    )
    rerun = per_evaluation.times(reruns).times(counts.expansions)
    return per_evaluation.times(counts.evaluations).plus(per_expansion.times(counts.expansions)).plus(rerun)


def rerun_solves(meta: MetaConfig) -> int:
    """The live re-run solves one expansion makes at most (`[meta] rerun`): every candidate, the model's, the
    repairs' and line repairs', the templates' (the larger of their two budgets) and the screen's kept
    edits, re-running all its tasks; an upper bound, as k candidates are."""
    if meta.rerun == 0:
        return 0
    templates = max(
        meta.templates * meta.locations, meta.test_templates * (meta.test_locations or meta.locations)
    )
    repairs = meta.repairs * meta.repair_locations + meta.line_repairs * meta.line_locations
    screened = min(meta.screen, KEPT)
    return (meta.candidates + templates + screened + repairs) * (meta.rerun + meta.rerun_passed)


def role_cost(role: Role, model: ModelConfig, tokens: Tokens) -> RoleCost:
    hosted = model.provider in HOSTED
    price = (model.price() or known_price(model.model)) if hosted else None
    dollars = 0.0 if price is None else price.cost(round(tokens.input), round(tokens.output))
    return RoleCost(role, model.model, tokens, dollars, priced=price is not None or not hosted)


def images_of(tasks: PlannedTasks) -> Images:
    swebench = [name for name in tasks.images if "sweb.eval" in name or name.startswith("swebench/")]
    instance_images = len(swebench) + tasks.unnamed_images
    others = len(tasks.images) - len(swebench)
    low = instance_images * SWEBENCH_IMAGE_GB[0] + others * OTHER_IMAGE_GB[0]
    high = instance_images * SWEBENCH_IMAGE_GB[1] + others * OTHER_IMAGE_GB[1]
    return Images(tasks.images, tasks.unnamed_images, low, high)


def make_plan(config: RunConfig, *, measured_from: Sequence[Path] | None = None, check: bool = True) -> Plan:
    """The plan of `config`; `measured_from` names runs to take per-job usage from (default: earlier runs
    in its archive on the same suite and solving model); `check` looks for missing prerequisites."""
    tasks = planned_tasks(config)
    counts = run_counts(config, tasks)
    profile = job_profile(config, measured_from)
    roles = tuple(
        role_cost(
            role,
            getattr(config.models, role),
            role_tokens(
                role,
                counts,
                profile,
                config.budget.job_tokens,
                config.meta.candidates,
                rerun_solves(config.meta),
            ),
        )
        for role in ROLES
    )
    container_hours = (
        counts.evaluations * profile.evaluation_minutes
        + counts.expansions * profile.expansion_minutes * config.meta.candidates
        + counts.expansions * rerun_solves(config.meta) * profile.evaluation_minutes
    ) / 60.0
    return Plan(
        config_name=config.run.name,
        suite=config.tasks.suite,
        policy=config.policy.name,
        counts=counts,
        profile=profile,
        roles=roles,
        container_hours=container_hours,
        cpu_hours=container_hours * config.sandbox.cpus,
        wall_hours=container_hours / config.executor.concurrency,
        concurrency=config.executor.concurrency,
        images=images_of(tasks),
        dollar_budget=config.budget.dollars,
        missing=missing_prerequisites(config, tasks.images, tasks.unnamed_images) if check else (),
        checked=check,
    )


def plan_priors(config: RunConfig, plan: Plan | None = None) -> Priors:
    """The price of one evaluation and one expansion in CPU-hours, tokens and dollars by the plan's
    per-job figures: the priors of the prices a run measures as its jobs finish (evolve.engine.costs)."""
    plan = plan or make_plan(config, check=False)
    profile, cpus, cap = plan.profile, config.sandbox.cpus, config.budget.job_tokens

    def tokens(job: RoleTokens) -> float:
        return sum(job.of(role).capped(cap).total for role in ROLES)

    def dollars(job: RoleTokens) -> float:
        return sum(
            role_cost(role, getattr(config.models, role), job.of(role).capped(cap)).dollars for role in ROLES
        )

    return Priors(
        evaluation_cpu_hours=profile.evaluation_minutes / 60.0 * cpus,
        expansion_cpu_hours=profile.expansion_minutes / 60.0 * cpus,
        evaluation_tokens=tokens(profile.evaluation),
        expansion_tokens=tokens(profile.expansion),
        evaluation_dollars=dollars(profile.evaluation),
        expansion_dollars=dollars(profile.expansion),
    )
