"""The search benchmark with priced expansions: every policy on the same worlds for a
budget of units (an evaluation about 1, an expansion about C), for each C of the sweep, in two world
families (the project's `SyntheticWorld`, exact prices; `evolve.search.worlds.RuggedWorld`, noisy
per-node prices and other distributions). Every policy decides on the runner's view: the episode
prices it with `evolve.search.spend.priced_view`, the function `SearchState` calls in a run, from the
prices measured on the episode's finished jobs (prior: the world's nominal prices).

Per world family, C and policy: the mean and 95 % CI over seeds of the true quality of the final agent, the
units spent, the nodes grown, and the correlation of the policy's CMP estimate with the true clade
metaproductivity over its final tree; per C, the cost-aware policy's paired difference against HGM (same
seeds, so the same worlds) with its 95 % interval. And for the estimators alone: each one on a fixed set of
trees, the same trees for all (grown by uniform random expansions and evaluations).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import TypeVar

import numpy as np

from evolve.search.costaware import HGMCostPolicy
from evolve.search.estimates import clade_posterior_mean, mean_accuracy
from evolve.search.policies import default_policy
from evolve.search.simulate import (
    EpisodeResult,
    SyntheticWorld,
    WorldFamily,
    WorldParams,
    pearson,
    run_episode,
    true_cmp,
)
from evolve.search.tree import CladeTree
from evolve.search.types import Policy
from evolve.search.view import SearchView
from evolve.search.worlds import RuggedParams
from evolve.stats import Interval, mean_ci95

DEFAULT_COSTS = (1.0, 2.0, 4.0, 8.0)
PRICED_POLICIES = ("hgm", "hgm_cost", "dgm")
COST_AWARE = "hgm_cost"
WORLD_FAMILIES: dict[str, WorldFamily] = {"project": WorldParams(), "rugged": RuggedParams()}
CHECK_SEEDS_FROM = 1000
"""The sweep's worlds are seeds 1000.. by default; hgm_cost's parameters were chosen on seeds 0..99
(docs/search.md, "Search that pays for what it spends"), so the check never sees a world the choice saw."""


def _json(interval: Interval) -> dict | None:
    """None for a correlation defined on no seed (strict JSON has no NaN)."""
    return None if np.isnan(interval.mean) else interval.to_json()


@dataclass(frozen=True)
class PricedScore:
    final_quality: Interval
    units: float
    nodes: float
    cmp_correlation: Interval
    """Over the seeds where the correlation is defined."""
    overspend: float = 0.0
    """The most any episode spent past the budget, in units of that episode's dearest job (≤ 1 required)."""

    def to_json(self) -> dict:
        return {
            "final_quality": self.final_quality.to_json(),
            "units": self.units,
            "nodes": self.nodes,
            "cmp_correlation": _json(self.cmp_correlation),
            "overspend_in_jobs": self.overspend,
        }


@dataclass(frozen=True)
class PricedSweep:
    budget: int
    seeds: tuple[int, ...]
    costs: tuple[float, ...]
    worlds: tuple[str, ...] = ("project",)
    policies: dict[tuple[str, float], dict[str, PricedScore]] = field(default_factory=dict)
    """Per (world family, C), per policy."""
    paired: dict[tuple[str, float], Interval] = field(default_factory=dict)
    """hgm_cost − hgm per (world family, C), paired on the same worlds."""
    estimators: dict[str, Interval] = field(default_factory=dict)
    """Each estimator's correlation with the true CMP on the fixed trees."""

    def to_json(self) -> dict:
        return {
            "units_budget": self.budget,
            "seeds": [self.seeds[0], self.seeds[-1]] if self.seeds else [],
            "view": (
                "the runner's: evolve.search.spend.priced_view, measured prices with the nominal ones "
                "as prior"
            ),
            "by_world": {
                world: {
                    str(cost): {
                        "policies": {
                            name: score.to_json() for name, score in self.policies[world, cost].items()
                        },
                        **(
                            {"hgm_cost_minus_hgm": self.paired[world, cost].to_json()}
                            if (world, cost) in self.paired
                            else {}
                        ),
                    }
                    for cost in self.costs
                }
                for world in self.worlds
            },
            "estimators_on_fixed_trees": {name: _json(value) for name, value in self.estimators.items()},
        }


def priced_policy(name: str, overrides: Mapping[str, Policy] | None = None) -> Policy:
    """The policy `name` as configured; `hgm_cost` reads the price from its view, nothing is set here."""
    return (overrides or {}).get(name) or default_policy(name)


_T = TypeVar("_T")
Episode = tuple[Policy, WorldFamily, int, int, float, bool]
"""`run_episode`'s arguments: policy, world, budget, seed, expansion price, trace."""


def _episode(job: Episode) -> EpisodeResult:
    policy, world, budget, seed, cost, trace = job
    return run_episode(policy, world, budget, seed, expand_cost=cost, trace=trace)


def run_many(jobs: list[Episode], workers: int | None = None) -> list[EpisodeResult]:
    """The episodes on up to 2 processes (results in the order of `jobs`; each episode is seeded by its
    own seed, so the split over processes changes nothing)."""
    return run_many_while(jobs, lambda: None, workers)[0]


def run_many_while(
    jobs: list[Episode], meanwhile: Callable[[], _T], workers: int | None = None
) -> tuple[list[EpisodeResult], _T]:
    """`run_many`, with `meanwhile()` run in this process while the pool works (the bench's own
    single-process parts overlap the episodes instead of following them)."""
    workers = workers or min(2, os.cpu_count() or 1)
    if workers <= 1:
        return [_episode(job) for job in jobs], meanwhile()
    with ProcessPoolExecutor(workers) as pool:
        pending = pool.map(_episode, jobs, chunksize=4)
        extra = meanwhile()
        return list(pending), extra


def _defined(values: Sequence[float]) -> Interval:
    finite = [v for v in values if np.isfinite(v)]
    return mean_ci95(finite) if finite else Interval(float("nan"), float("nan"), float("nan"))


def fixed_tree(
    world_params: WorldParams, seed: int, nodes: int = 60, evaluations: int = 600
) -> tuple[SearchView, np.ndarray]:
    """A tree grown without any policy (uniform random valid parents, uniform random evaluations of
    valid nodes on their next task) and the true CMP of its nodes."""
    rng = np.random.default_rng([seed, 21])
    world = SyntheticWorld(world_params, rng)
    tree = CladeTree()
    tree.add_node(0)
    for _ in range(nodes - 1):
        valid = [i for i, ok in enumerate(world.valid) if ok]
        child = world.spawn(int(rng.choice(valid)))
        tree.add_node(child, world.parent[child], valid=world.valid[child])
    valid = [i for i, ok in enumerate(world.valid) if ok]
    for _ in range(evaluations):
        node = int(rng.choice(valid))
        done = tree.evaluated(node)
        if len(done) < world_params.n_tasks:
            task = next(t for t in range(world_params.n_tasks) if t not in done)
            tree.record(node, task, world.evaluate(node, task))
    return tree.view(range(world_params.n_tasks), evaluations), true_cmp(world, len(world.valid))


ESTIMATORS: dict[str, Callable[[SearchView], np.ndarray]] = {
    "hgm": lambda view: clade_posterior_mean(view.clade_successes, view.clade_failures),
    "dgm": lambda view: mean_accuracy(view.successes, view.failures),
    COST_AWARE: lambda view: HGMCostPolicy().cmp_estimate(view),
}


def estimator_accuracy(world: WorldParams, seeds: int) -> dict[str, Interval]:
    """Each estimator's correlation with the true CMP over the valid evaluated nodes of fixed trees."""
    trees = [fixed_tree(world, seed) for seed in range(seeds)]
    result = {}
    for name, estimate in ESTIMATORS.items():
        values = []
        for view, truth in trees:
            mask = view.valid & (view.done > 0)
            values.append(pearson(np.asarray(estimate(view), float)[mask], truth[mask]))
        result[name] = _defined(values)
    return result


def priced_sweep(
    policy_names: Sequence[str] = PRICED_POLICIES,
    costs: Sequence[float] = DEFAULT_COSTS,
    budget: int = 800,
    seeds: Sequence[int] = range(CHECK_SEEDS_FROM, CHECK_SEEDS_FROM + 30),
    worlds: Sequence[str] = tuple(WORLD_FAMILIES),
    overrides: Mapping[str, Policy] | None = None,
    workers: int | None = None,
) -> PricedSweep:
    """Each policy on each world family's worlds `seeds` for `budget` units at each expansion cost."""
    seeds = tuple(seeds)
    jobs = priced_jobs(policy_names, costs, budget, seeds, worlds, overrides)
    results, estimators = run_many_while(jobs, lambda: estimator_accuracy(WorldParams(), len(seeds)), workers)
    return score_priced(results, policy_names, costs, budget, seeds, worlds, estimators)


def priced_jobs(
    policy_names: Sequence[str],
    costs: Sequence[float],
    budget: int,
    seeds: Sequence[int],
    worlds: Sequence[str],
    overrides: Mapping[str, Policy] | None = None,
) -> list[Episode]:
    """The sweep's episodes: per world family, per C, per policy, the worlds `seeds` (`score_priced`'s
    order)."""
    for world in worlds:
        if world not in WORLD_FAMILIES:
            raise ValueError(f"unknown world family {world!r}; known: {', '.join(WORLD_FAMILIES)}")
    return [
        (priced_policy(name, overrides), WORLD_FAMILIES[world], budget, seed, float(cost), False)
        for world in worlds
        for cost in costs
        for name in policy_names
        for seed in seeds
    ]


def score_priced(
    episodes: Sequence[EpisodeResult],
    policy_names: Sequence[str],
    costs: Sequence[float],
    budget: int,
    seeds: Sequence[int],
    worlds: Sequence[str],
    estimators: dict[str, Interval],
) -> PricedSweep:
    """The sweep's table from the episodes of `priced_jobs` (in its order)."""
    results = iter(episodes)
    sweep = PricedSweep(
        budget, tuple(seeds), tuple(float(c) for c in costs), tuple(worlds), estimators=estimators
    )
    for world in sweep.worlds:
        for cost in sweep.costs:
            by_name = {name: [next(results) for _ in sweep.seeds] for name in policy_names}
            sweep.policies[world, cost] = {
                name: PricedScore(
                    final_quality=mean_ci95([r.final_quality for r in runs]),
                    units=float(np.mean([r.units for r in runs])),
                    nodes=float(np.mean([r.nodes for r in runs])),
                    cmp_correlation=_defined([r.cmp_correlation for r in runs]),
                    overspend=max(max(r.units - budget, 0.0) / max(r.largest_job, 1e-12) for r in runs),
                )
                for name, runs in by_name.items()
            }
            if COST_AWARE in by_name and "hgm" in by_name:
                sweep.paired[world, cost] = mean_ci95(
                    [
                        a.final_quality - b.final_quality
                        for a, b in zip(by_name[COST_AWARE], by_name["hgm"], strict=True)
                    ]
                )
    return sweep
