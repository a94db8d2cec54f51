"""The search benchmark: every policy on the same synthetic worlds, scored by ground truth.

`bench_search` is what `evolve bench search` prints: per policy the mean and 95 % CI (Student t over
seeds) of the true quality of its final agent and of the best node in its tree, the evaluations it
needed to name a final agent as good as the DGM policy's (per seed; the budget when it never did),
its decisions per second, and the median time of one `next_action` on a 10,000-node tree.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
from scipy import stats

from evolve.search.dgm import DGMPolicy, GreedyPolicy, RandomPolicy
from evolve.search.hgm import HGMPolicy
from evolve.search.simulate import EpisodeResult, WorldParams, compare_policies
from evolve.search.types import Policy
from evolve.search.view import SearchView

DEFAULT_POLICIES = ("hgm", "dgm", "greedy", "random")
_MATCH_TOLERANCE = 1e-9


def default_policy(name: str) -> Policy:
    """A policy with its DESIGN.md §5 default parameters."""
    makers = {"hgm": HGMPolicy, "dgm": DGMPolicy, "greedy": GreedyPolicy, "random": RandomPolicy}
    if name not in makers:
        raise ValueError(f"unknown policy {name!r}; known: {', '.join(makers)}")
    return makers[name]()


@dataclass(frozen=True)
class Interval:
    """A mean and its 95 % confidence interval."""

    mean: float
    low: float
    high: float

    def to_json(self) -> dict:
        return {"mean": self.mean, "ci95": [self.low, self.high]}


def mean_ci95(values: Sequence[float]) -> Interval:
    """Mean ± t(0.975, n−1)·sd/√n; a single value has a zero-width interval."""
    data = np.asarray(values, dtype=float)
    mean = float(data.mean())
    if data.size < 2:
        return Interval(mean, mean, mean)
    half = float(stats.t.ppf(0.975, data.size - 1) * data.std(ddof=1) / np.sqrt(data.size))
    return Interval(mean, mean - half, mean + half)


def evals_to_match(quality_by_evals: np.ndarray, target: float) -> int | None:
    """First n at which the final agent's true quality reaches `target`; None if it never does."""
    reached = np.flatnonzero(quality_by_evals >= target - _MATCH_TOLERANCE)
    return int(reached[0]) if reached.size else None


@dataclass(frozen=True)
class PolicyScore:
    final_quality: Interval
    best_quality: Interval
    evals_to_match_dgm: float
    matched_dgm: float
    nodes: float
    decisions_per_s: float
    decision_ms_10k_nodes: float

    def to_json(self) -> dict:
        return {
            "final_quality": self.final_quality.to_json(),
            "best_quality": self.best_quality.to_json(),
            "evals_to_match_dgm": self.evals_to_match_dgm,
            "matched_dgm_fraction": self.matched_dgm,
            "nodes": self.nodes,
            "decisions_per_s": self.decisions_per_s,
            "decision_ms_10k_nodes": self.decision_ms_10k_nodes,
        }


@dataclass(frozen=True)
class SearchBench:
    budget: int
    seeds: int
    policies: dict[str, PolicyScore] = field(default_factory=dict)
    decision_ms_10k_nodes: float = float("nan")
    view_ms_10k_nodes: float = float("nan")

    def to_json(self) -> dict:
        return {
            "budget": self.budget,
            "seeds": self.seeds,
            "policies": {name: score.to_json() for name, score in self.policies.items()},
            "decision_ms_10k_nodes": self.decision_ms_10k_nodes,
            "view_ms_10k_nodes": self.view_ms_10k_nodes,
        }


def random_view(n_nodes: int, rng: np.random.Generator, n_tasks: int = 100) -> SearchView:
    """A random tree of `n_nodes` (uniform random parents), 80 % valid, each with some tasks done."""
    parent = np.concatenate([[-1], [rng.integers(0, i) for i in range(1, n_nodes)]]).astype(np.int64)
    done = rng.integers(0, 20, n_nodes)
    successes = rng.binomial(done, 0.4)
    task_order = tuple(range(n_tasks))
    evaluated = [frozenset(range(d)) for d in done.tolist()]
    used = int(done.sum())
    return SearchView(
        ids=tuple(range(n_nodes)), parent=parent, valid=rng.random(n_nodes) < 0.8,
        successes=successes, failures=done - successes, evaluated=evaluated, task_order=task_order,
        budget=used + 1000, used=used,
    )  # fmt: skip


def time_next_action(policy: Policy, view: SearchView, repeats: int = 30, seed: int = 0) -> float:
    """Median milliseconds of one `policy.next_action(view, rng)`."""
    rng = np.random.default_rng(seed)
    policy.next_action(view, rng)  # warm caches (cached_property) as a runner's view would not
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        policy.next_action(view, rng)
        samples.append(time.perf_counter() - start)
    return float(np.median(samples) * 1000.0)


def time_view_build(n_nodes: int, repeats: int = 5, seed: int = 0) -> float:
    """Median milliseconds to build a `SearchView` of `n_nodes` from plain arrays (clade counts
    computed in the view, as when the runner does not pass the tree's)."""
    template = random_view(n_nodes, np.random.default_rng(seed))
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        SearchView(
            ids=template.ids, parent=template.parent, valid=template.valid,
            successes=template.successes, failures=template.failures, evaluated=template.evaluated,
            task_order=template.task_order, budget=template.budget, used=template.used,
        )  # fmt: skip
        samples.append(time.perf_counter() - start)
    return float(np.median(samples) * 1000.0)


def _score(results: list[EpisodeResult], targets: list[float], budget: int, ms_10k: float) -> PolicyScore:
    matches = [evals_to_match(r.quality_by_evals, t) for r, t in zip(results, targets, strict=True)]
    decisions = sum(r.decisions for r in results)
    seconds = sum(r.decision_seconds for r in results)
    return PolicyScore(
        final_quality=mean_ci95([r.final_quality for r in results]),
        best_quality=mean_ci95([r.best_quality for r in results]),
        evals_to_match_dgm=float(np.mean([budget if m is None else m for m in matches])),
        matched_dgm=float(np.mean([m is not None for m in matches])),
        nodes=float(np.mean([r.nodes for r in results])),
        decisions_per_s=decisions / seconds if seconds > 0 else float("inf"),
        decision_ms_10k_nodes=ms_10k,
    )


def bench_search(
    policy_names: Sequence[str] = DEFAULT_POLICIES,
    budget: int = 800,
    seeds: int = 30,
    world: WorldParams | None = None,
    policies: Mapping[str, Policy] | None = None,
    tree_nodes: int = 10_000,
) -> SearchBench:
    """Run each policy on worlds 0..seeds-1 (DGM as the reference even when not listed) and score it.

    `policies` overrides the default policy for a name (e.g. one built from a run config).
    """
    world = world or WorldParams()
    chosen = {name: (policies or {}).get(name) or default_policy(name) for name in policy_names}
    runs = dict(chosen)
    runs.setdefault("dgm", (policies or {}).get("dgm") or default_policy("dgm"))
    results = compare_policies(runs, world, budget, list(range(seeds)))
    targets = [r.final_quality for r in results["dgm"]]
    view = random_view(tree_nodes, np.random.default_rng(12345))
    scores = {
        name: _score(results[name], targets, budget, time_next_action(policy, view))
        for name, policy in chosen.items()
    }
    default_ms = (
        scores["hgm"].decision_ms_10k_nodes
        if "hgm" in scores
        else time_next_action(default_policy("hgm"), view)
    )
    return SearchBench(budget, seeds, scores, default_ms, time_view_build(tree_nodes))
