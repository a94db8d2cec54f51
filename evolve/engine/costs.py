"""What the runner's jobs cost, measured from the archive: one budget line per unit the run
names, for the priced view (evolve.search.spend).

Every figure comes from the engine's own rows, never from agent output: CPU-hours from job start and
end times (the runner writes them) times the sandbox's CPUs, tokens and dollars from the gateway's
counts. Per job kind: an evaluation's tokens are its row's; an expansion's are the node totals less
the evaluation tokens (the gateway charges both to nodes, `evolve.archive.compute.expansion_tokens`).
Dollars are charged to nodes only, so they divide between the kinds as the tokens do (exact for one
hosted model on every role; an estimate when the roles' models have different prices).

The prior of each price is the plan's (`evolve run` passes `evolve plan`'s per-job figures, and a
run keeps the priors it started with in its meta, so a resume prices as the first start did).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass

from evolve.archive.compute import cpu_hours
from evolve.archive.store import Run
from evolve.archive.vocab import JobKind
from evolve.config import BudgetConfig
from evolve.search.spend import KindTotals, Line, Spend

PRIORS_META = "priors"


@dataclass(frozen=True)
class Priors:
    """The plan's price of one evaluation and one expansion in each unit; 0 where nothing is known
    (the price is then the run's own mean once a job of that kind has finished)."""

    evaluation_cpu_hours: float = 0.0
    expansion_cpu_hours: float = 0.0
    evaluation_tokens: float = 0.0
    expansion_tokens: float = 0.0
    evaluation_dollars: float = 0.0
    expansion_dollars: float = 0.0

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> Priors:
        return cls(**json.loads(text))


def kept_priors(run: Run, priors: Priors | None) -> Priors:
    """The run's priors: those it recorded at its first start, else `priors` (recorded now)."""
    try:
        return Priors.from_json(run.meta(PRIORS_META))
    except KeyError:
        chosen = priors or Priors()
        run.set_meta(PRIORS_META, chosen.to_json())
        return chosen


def budget_lines(
    run: Run, budget: BudgetConfig, results: int, cpus_per_job: float, priors: Priors, reserve_jobs: int
) -> tuple[Line, ...]:
    """The run's budget lines now: the evaluations budget, and each of CPU-hours, tokens and dollars the
    config names, with its spend and per-kind totals from the archive. `reserve_jobs`: held-out
    evaluations still due (they count against every budget but the evaluations one)."""
    lines = [Line("evaluations", float(budget.evaluations), spent=float(results))]
    if budget.cpu_hours is not None:
        totals = run.job_totals()
        evaluate, expand = totals[JobKind.EVALUATE], totals[JobKind.EXPAND]
        kinds = (
            KindTotals(evaluate[0], cpu_hours(evaluate[1], cpus_per_job)),
            KindTotals(expand[0], cpu_hours(expand[1], cpus_per_job)),
        )
        lines.append(
            Line(
                "cpu_hours",
                budget.cpu_hours,
                kinds[0].cost + kinds[1].cost,
                *kinds,
                priors.evaluation_cpu_hours,
                priors.expansion_cpu_hours,
                reserve_jobs,
            )
        )
    if budget.tokens is None and budget.dollars is None:
        return tuple(lines)
    tokens, dollars = run.usage_totals()
    evaluations, evaluation_tokens = run.evaluation_usage()
    expansions = run.job_totals()[JobKind.EXPAND][0]
    expansion_tokens = max(tokens - evaluation_tokens, 0)
    if budget.tokens is not None:
        lines.append(
            Line(
                "tokens",
                float(budget.tokens),
                float(tokens),
                KindTotals(evaluations, evaluation_tokens),
                KindTotals(expansions, expansion_tokens),
                priors.evaluation_tokens,
                priors.expansion_tokens,
                reserve_jobs,
            )
        )
    if budget.dollars is not None:
        share = evaluation_tokens / tokens if tokens else 0.0
        lines.append(
            Line(
                "dollars",
                budget.dollars,
                dollars,
                KindTotals(evaluations, dollars * share),
                KindTotals(expansions, dollars * (1.0 - share)),
                priors.evaluation_dollars,
                priors.expansion_dollars,
                reserve_jobs,
            )
        )
    return tuple(lines)


def eta_seconds(
    spend: Spend | None, totals: Mapping[JobKind, tuple[int, float]], heldout_due: int, concurrency: int
) -> float | None:
    """Wall seconds until the run ends: the binding budget's rest (`spend`: what is left and what is in
    flight; None once the search is over) at the wall time the run's finished jobs took per unit spent,
    then the held-out evaluations still due at their measured mean; None before an evaluation has
    finished. For `cpu_hours` the rate is exact (3600 s per CPU-hour over the sandbox's CPUs); a policy
    that stops early ends the run sooner."""
    evaluations, expansions = totals[JobKind.EVALUATE], totals[JobKind.EXPAND]
    wall = evaluations[1] + expansions[1]
    if not evaluations[0] or wall <= 0 or (spend is not None and spend.spent <= 0):
        return None
    search = 0.0 if spend is None else (spend.left + spend.in_flight) * wall / spend.spent
    return (search + heldout_due * evaluations[1] / evaluations[0]) / max(concurrency, 1)
