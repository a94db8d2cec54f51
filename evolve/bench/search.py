"""The search benchmark: every policy on the same synthetic worlds, scored by ground truth.

`bench_search` is what `evolve bench search` prints: per policy the mean and 95 % CI (Student t over
seeds) of the true quality of its final agent and of the best node in its tree, the evaluations it
needed to name a final agent as good as the DGM policy's (per seed; the budget when it never did),
its decisions per second, and the runner's own per-decision cost on a run of 10,000 nodes and
100,000 counted evaluations: the runner's `SearchState` (the one `CladeTree`) builds its view, then
the policy decides on it, each decision on a fresh view as the runner does (nothing warmed).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from evolve.archive.records import Evaluation, Node
from evolve.archive.vocab import NodeStatus, Outcome
from evolve.engine.state import SearchState
from evolve.search.policies import default_policy
from evolve.search.simulate import EpisodeResult, WorldParams
from evolve.search.spend import KindTotals, Line
from evolve.search.types import Policy
from evolve.stats import Interval, mean_ci95

if TYPE_CHECKING:
    from evolve.bench.priced import PricedSweep

DEFAULT_POLICIES = ("hgm", "dgm", "gea", "greedy", "random")
SELECTION_ONLY = {
    "gea": "its selection rule alone: the synthetic world has no experience for a group to share"
}
_MATCH_TOLERANCE = 1e-9


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
    """The runner's decision (view build included) at 10,000 nodes and 100,000 evaluations."""
    view_ms_10k_nodes: float

    def to_json(self) -> dict:
        return {
            "final_quality": self.final_quality.to_json(),
            "best_quality": self.best_quality.to_json(),
            "evals_to_match_dgm": self.evals_to_match_dgm,
            "matched_dgm_fraction": self.matched_dgm,
            "nodes": self.nodes,
            "decisions_per_s": self.decisions_per_s,
            "decision_ms_10k_nodes": self.decision_ms_10k_nodes,
            "view_ms_10k_nodes": self.view_ms_10k_nodes,
        }


@dataclass(frozen=True)
class SearchBench:
    budget: int
    seeds: int
    runner: RunnerDecision
    """The default (HGM) policy's decision on the runner's path."""
    tree_nodes: int
    tree_evaluations: int
    policies: dict[str, PolicyScore] = field(default_factory=dict)
    priced: PricedSweep | None = None
    """The sweep over expansion prices (evolve.bench.priced); None when no price was asked for."""

    @property
    def decision_ms_10k_nodes(self) -> float:
        return self.runner.decision_ms

    @property
    def view_ms_10k_nodes(self) -> float:
        return self.runner.view_ms

    def to_json(self) -> dict:
        return {
            "budget": self.budget,
            "seeds": self.seeds,
            "policies": {name: score.to_json() for name, score in self.policies.items()},
            "runner_path": {
                "nodes": self.tree_nodes,
                "evaluations": self.tree_evaluations,
                "view_ms": self.runner.view_ms,
                "decision_ms": self.runner.decision_ms,
            },
            "decision_ms_10k_nodes": self.decision_ms_10k_nodes,
            "view_ms_10k_nodes": self.view_ms_10k_nodes,
            **({"priced": self.priced.to_json()} if self.priced is not None else {}),
        }


def runner_state(
    n_nodes: int, n_evaluations: int, rng: np.random.Generator, n_tasks: int = 100
) -> SearchState:
    """The runner's state rebuilt from archive rows (as on resume): a random tree of `n_nodes` (uniform
    random parents, 80 % valid), `n_evaluations` results spread over the nodes on their first tasks,
    and a few jobs in flight, as at concurrency 8."""
    parents = [None] + [str(rng.integers(0, i)) for i in range(1, n_nodes)]
    valid = rng.random(n_nodes) < 0.8
    nodes = [
        Node(str(i), parents[i], "c", 0.0, "bench", NodeStatus.VALID if valid[i] else NodeStatus.INVALID)
        for i in range(n_nodes)
    ]
    done = np.minimum(rng.multinomial(n_evaluations, np.full(n_nodes, 1.0 / n_nodes)), n_tasks)
    task_order = [f"t{j}" for j in range(n_tasks)]
    passed = rng.random(int(done.sum())) < 0.4
    rows = [(str(i), task_order[j]) for i, d in enumerate(done.tolist()) for j in range(d)]
    outcomes = [Outcome.PASS if ok else Outcome.FAIL for ok in passed.tolist()]
    state = SearchState(
        nodes, [Evaluation(n, t, 1, o) for (n, t), o in zip(rows, outcomes, strict=True)], task_order
    )
    busy = np.flatnonzero(valid & (done < n_tasks))[:6]
    for job, node in enumerate(busy.tolist()):
        state.pending_evaluations[job] = (str(node), task_order[int(done[node])])
    state.pending_expansions.update({6: "0", 7: str(int(busy[0])) if busy.size else "0"})
    return state


@dataclass(frozen=True)
class RunnerDecision:
    """Medians over fresh decisions on the runner's own path (no warmed view)."""

    view_ms: float
    """`SearchState.priced_view()`: the snapshot the policy decides on."""
    decision_ms: float
    """The view build, the decision's generator and `policy.next_action`: one decision of the runner."""


def time_runner_decision(
    policy: Policy, state: SearchState, repeats: int = 30, seed: int = 0
) -> RunnerDecision:
    """Median milliseconds of the runner's decision: `state.priced_view(...)` (an evaluations budget and a
    CPU-hour one, as a run under `[budget] cpu_hours` has) then `policy.next_action(view, rng)`."""
    budget = state.used + 1000
    lines = (
        Line("evaluations", float(budget), spent=float(state.used)),
        Line(
            "cpu_hours",
            100.0,
            20.0,
            KindTotals(state.used, 10.0),
            KindTotals(len(state.tree), 10.0),
            0.01,
            0.04,
        ),
    )
    views, decisions = [], []
    for decision in range(repeats):
        start = time.perf_counter()
        view = state.priced_view(lines)
        built = time.perf_counter()
        # a generator per decision, as the runner's
        policy.next_action(view, np.random.default_rng([seed, decision]))
        views.append(built - start)
        decisions.append(time.perf_counter() - start)
    return RunnerDecision(float(np.median(views) * 1000.0), float(np.median(decisions) * 1000.0))


def _score(
    results: list[EpisodeResult], targets: list[float], budget: int, runner: RunnerDecision
) -> PolicyScore:
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
        decision_ms_10k_nodes=runner.decision_ms,
        view_ms_10k_nodes=runner.view_ms,
    )


def bench_search(
    policy_names: Sequence[str] = DEFAULT_POLICIES,
    budget: int = 800,
    seeds: int = 30,
    world: WorldParams | None = None,
    policies: Mapping[str, Policy] | None = None,
    tree_nodes: int = 10_000,
    tree_evaluations: int | None = None,
    expand_costs: Sequence[float] = (),
    priced_policies: Sequence[str] = (),
    priced_seeds: Sequence[int] | None = None,
    worlds: Sequence[str] | None = None,
) -> SearchBench:
    """Run each policy on worlds 0..seeds-1 (DGM as the reference even when not listed) and score it;
    time each policy's decision on the runner's path at `tree_nodes` nodes and `tree_evaluations`
    counted evaluations (10 per node by default: 100,000 at 10,000 nodes).

    `policies` overrides the default policy for a name (e.g. one built from a run config).
    With `expand_costs`, `priced_policies` also run for `budget` units at each expansion price in each
    world family of `worlds` (all by default) on the worlds `priced_seeds` (by default as many as
    `seeds`, from `CHECK_SEEDS_FROM`: disjoint from those hgm_cost's parameters were chosen on)
    (evolve.bench.priced).
    """
    world = world or WorldParams()
    chosen = {name: (policies or {}).get(name) or default_policy(name) for name in policy_names}
    runs = dict(chosen)
    runs.setdefault("dgm", (policies or {}).get("dgm") or default_policy("dgm"))
    from evolve.bench.priced import (
        CHECK_SEEDS_FROM,
        PRICED_POLICIES,
        WORLD_FAMILIES,
        estimator_accuracy,
        priced_jobs,
        run_many_while,
        score_priced,
    )

    free = [(policy, world, budget, seed, 0.0, True) for policy in runs.values() for seed in range(seeds)]
    priced_names = priced_policies or PRICED_POLICIES
    check_seeds = tuple(
        priced_seeds if priced_seeds is not None else range(CHECK_SEEDS_FROM, CHECK_SEEDS_FROM + seeds)
    )
    families = tuple(worlds or WORLD_FAMILIES)
    priced = (
        priced_jobs(priced_names, expand_costs, budget, check_seeds, families, policies)
        if expand_costs
        else []
    )

    def meanwhile() -> tuple[SearchState, dict]:  # this process's share, while the pool runs the episodes
        state = runner_state(tree_nodes, tree_evaluations or 10 * tree_nodes, np.random.default_rng(12345))
        return state, (estimator_accuracy(world, seeds) if expand_costs else {})

    episodes, (state, estimators) = run_many_while(free + priced, meanwhile)
    ordered = iter(episodes[: len(free)])
    results = {name: [next(ordered) for _ in range(seeds)] for name in runs}
    targets = [r.final_quality for r in results["dgm"]]
    # the cores are quiet now
    timings = {name: time_runner_decision(policy, state) for name, policy in chosen.items()}
    scores = {name: _score(results[name], targets, budget, timings[name]) for name in chosen}
    default = timings["hgm"] if "hgm" in timings else time_runner_decision(default_policy("hgm"), state)
    sweep = (
        score_priced(
            episodes[len(free) :], priced_names, expand_costs, budget, check_seeds, families, estimators
        )
        if expand_costs
        else None
    )
    return SearchBench(budget, seeds, default, tree_nodes, state.used, scores, sweep)
