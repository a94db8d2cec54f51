"""A synthetic self-improvement world with known ground truth, to compare policies without models.

Each node has a hidden skill `q` (logit scale); each task a difficulty `d_j`; the node passes task j
with probability `sigmoid(q − d_j)`, and its true quality is the mean of those over the tasks. An
evaluation is one Bernoulli draw. A child's skill is its parent's plus the child's hidden heritable
productivity `π` plus a non-heritable step: `q_c = q_p + π_c + step`, `π_c = π_p + δ`. So lineages
improve (π > 0), stagnate or decay (π < 0), and with `tradeoff < 0` a lucky big step comes with a
productivity loss: early high scorers need not be the productive ones (the metaproductivity-
performance mismatch of the HGM paper). Some children fail validation (`invalid_rate`).

`run_episode` drives one policy on one seeded world for a budget of evaluations, one job at a time,
keeping the tree in the runner's `CladeTree` (incremental clade counts), and records the true
quality of the policy's final agent after every evaluation. With priced expansions the budget is in
units (a unit's price per job is the world's: here an evaluation costs 1 and an expansion C; the
second world family, evolve.search.worlds, draws noisy per-node prices), and the policy's view is
priced by `evolve.search.spend.priced_view`, the function the runner's `SearchState` calls: the
prices are measured from the episode's finished jobs with the world's nominal prices as the prior,
as a run measures its own with the plan's.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol, cast

import numpy as np
from scipy.special import expit

from evolve.search.spend import KindTotals, Line, Unit, priced_view, spent_out
from evolve.search.tree import CladeTree
from evolve.search.types import Evaluate, Expand, Policy, Stop
from evolve.search.view import SearchView


@dataclass(frozen=True)
class WorldParams:
    """The default world; chosen before any policy was run on it, not tuned to a policy."""

    n_tasks: int = 100
    """Tasks in the benchmark."""
    difficulty_sd: float = 1.5
    """Spread of task difficulties (logit scale, mean 0)."""
    root_skill: float = -0.8
    """Skill of the root agent (true quality about 0.34 with the default difficulties)."""
    step_mean: float = -0.2
    """Mean non-heritable change of a child's skill: most edits hurt a little."""
    step_sd: float = 0.4
    """Spread of the non-heritable change."""
    productivity_sd: float = 0.15
    """Spread of the heritable change of productivity per generation."""
    tradeoff: float = -0.5
    """Correlation of a child's step with its productivity change (< 0: the mismatch)."""
    invalid_rate: float = 0.2
    """Chance that a child fails validation."""

    @property
    def family(self) -> str:
        return "project"

    def build(self, rng: np.random.Generator, expand_cost: float) -> SyntheticWorld:
        return SyntheticWorld(self, rng, expand_cost)


class LogitWorld:
    """What both world families share: a node passes task j with probability `sigmoid(q − d_j)`, its
    true quality the mean of those over the tasks, and an evaluation one Bernoulli draw."""

    def __init__(
        self, rng: np.random.Generator, difficulty: np.ndarray, root_skill: float, expand_cost: float
    ) -> None:
        self._rng = rng
        self.expand_cost = expand_cost
        self.difficulty = difficulty
        self.skill: list[float] = [root_skill]
        self.productivity: list[float] = [0.0]
        self.valid: list[bool] = [True]
        self.parent: list[int] = [-1]
        self._quality: dict[int, float] = {}  # true quality per node, computed once (skills never change)

    def pass_probability(self, node: int, task: int) -> float:
        return float(expit(self.skill[node] - self.difficulty[task]))

    def evaluate(self, node: int, task: int) -> bool:
        """One graded run: a Bernoulli draw with the node's hidden pass probability on the task."""
        return bool(self._rng.random() < self.pass_probability(node, task))

    def true_quality(self, node: int) -> float:
        """Mean pass probability over all tasks: the ground truth the bench scores agents by."""
        quality = self._quality.get(node)
        if quality is None:
            quality = self._quality[node] = float(expit(self.skill[node] - self.difficulty).mean())
        return quality

    @property
    def nominal_prices(self) -> tuple[float, float]:
        """The prices a plan would name (the prior of the episode's measured prices): 1 and C."""
        return 1.0, self.expand_cost


class SyntheticWorld(LogitWorld):
    """One seeded world: task difficulties and the hidden skill/productivity of every node born."""

    def __init__(self, params: WorldParams, rng: np.random.Generator, expand_cost: float = 0.0) -> None:
        super().__init__(
            rng, rng.normal(0.0, params.difficulty_sd, params.n_tasks), params.root_skill, expand_cost
        )
        self.params = params

    def spawn(self, parent: int) -> int:
        """A child of `parent`; returns its index (the world's nodes grow in creation order)."""
        p = self.params
        z1, z2 = self._rng.standard_normal(2)
        step = p.step_mean + p.step_sd * z1
        delta = p.productivity_sd * (p.tradeoff * z1 + np.sqrt(1.0 - p.tradeoff**2) * z2)
        productivity = self.productivity[parent] + delta
        self.productivity.append(productivity)
        self.skill.append(self.skill[parent] + productivity + step)
        self.valid.append(bool(self._rng.random() >= p.invalid_rate))
        self.parent.append(parent)
        return len(self.skill) - 1

    def evaluation_price(self, node: int) -> float:
        """What evaluating `node` once costs in units: 1 (the price is the unit)."""
        return 1.0

    def expansion_price(self, parent: int) -> float:
        """What one expansion of `parent` costs: C, the same for every node."""
        return self.expand_cost


class World(Protocol):
    """What `run_episode` needs of a world (SyntheticWorld, evolve.search.worlds.RuggedWorld, a replay)."""

    valid: list[bool]
    parent: list[int]

    def spawn(self, parent: int) -> int: ...
    def evaluate(self, node: int, task: int) -> bool: ...
    def true_quality(self, node: int) -> float: ...
    def evaluation_price(self, node: int) -> float: ...
    def expansion_price(self, parent: int) -> float: ...
    @property
    def nominal_prices(self) -> tuple[float, float]: ...


class WorldFamily(Protocol):
    """Parameters of a family of seeded worlds (`WorldParams`, `evolve.search.worlds.RuggedParams`)."""

    @property
    def n_tasks(self) -> int: ...

    @property
    def family(self) -> str: ...
    def build(self, rng: np.random.Generator, expand_cost: float) -> World: ...


@dataclass(frozen=True)
class EpisodeResult:
    """One policy on one world."""

    final_quality: float
    """True quality of `policy.best` at the end."""
    best_quality: float
    """True quality of the best valid node in the tree."""
    quality_by_evals: np.ndarray
    """`[n]`: true quality of the final agent the policy would name after n evaluations."""
    nodes: int
    evaluations: int
    decisions: int
    decision_seconds: float
    """Time spent inside `next_action`."""
    expansions: int = 0
    units: float = 0.0
    """What the jobs cost: evaluations when expansions are free, else the world's prices summed."""
    cmp_correlation: float = float("nan")
    """Pearson correlation of the policy's CMP estimate with the true CMP over its final tree."""
    largest_job: float = 0.0
    """The dearest job's price in units (a priced episode may overspend its budget by at most this)."""


@dataclass
class _Spent:
    """What an episode's finished jobs cost, per kind, in its budget's unit."""

    evaluations: KindTotals = field(default_factory=KindTotals)
    expansions: KindTotals = field(default_factory=KindTotals)
    largest: float = 0.0
    """The dearest job so far."""

    @property
    def total(self) -> float:
        return self.evaluations.cost + self.expansions.cost

    def add(self, kind: str, cost: float) -> None:
        totals = getattr(self, kind)
        setattr(self, kind, KindTotals(totals.jobs + 1, totals.cost + cost))
        self.largest = max(self.largest, cost)


def episode_lines(
    world: World,
    budget: float,
    results: int,
    spent: _Spent,
    priced: bool,
    unit: Unit = "cpu_hours",
    evaluation_limit: int | None = None,
    reserve_jobs: int = 0,
) -> tuple[Line, ...]:
    """The episode's budget lines, as the runner's `[budget]` makes them: free expansions (C = 0) are
    the evaluations budget B alone; priced ones a budget in `unit` with the world's nominal prices as
    the prior of the measured ones (and an evaluations budget besides, when given)."""
    if not priced:
        return (Line("evaluations", float(budget), spent=float(results)),)
    prior_evaluation, prior_expansion = world.nominal_prices
    extra = (
        ()
        if evaluation_limit is None
        else (Line("evaluations", float(evaluation_limit), spent=float(results)),)
    )
    return (
        *extra,
        Line(
            unit,
            float(budget),
            spent.total,
            spent.evaluations,
            spent.expansions,
            prior_evaluation,
            prior_expansion,
            reserve_jobs,
        ),
    )


def run_episode(
    policy: Policy,
    params: WorldFamily,
    budget: int,
    seed: int,
    expand_cost: float = 0.0,
    trace: bool = True,
    *,
    world: World | None = None,
    task_order: Sequence | None = None,
    decision_rng: Callable[[int], np.random.Generator] | None = None,
    unit: Unit = "cpu_hours",
    evaluation_limit: int | None = None,
    reserve_jobs: int = 0,
) -> EpisodeResult:
    """Drive `policy` on the world of `seed` until it stops or spends `budget`: evaluations when
    expansions are free (`expand_cost` 0), else units of the world's prices (an evaluation about 1, an
    expansion about `expand_cost`). `trace=False` skips the final agent after every evaluation
    (`quality_by_evals` then holds only its ends).

    A replay (the runner-versus-bench test) passes its own `world` and `task_order`, the runner's
    generator per decision (`decision_rng`), its budget's `unit`, its `evaluation_limit` and the
    held-out evaluations it reserves (`reserve_jobs`)."""
    world_seq, order_seq, policy_seq = np.random.SeedSequence(seed).spawn(3)
    world = world if world is not None else params.build(np.random.default_rng(world_seq), expand_cost)
    if task_order is None:
        task_order = tuple(int(t) for t in np.random.default_rng(order_seq).permutation(params.n_tasks))
    rng = np.random.default_rng(policy_seq)
    next_rng = decision_rng or (lambda _decision: rng)
    tree, decisions, seconds, expansions, spent = CladeTree(), 0, 0.0, 0, _Spent()
    priced = expand_cost > 0

    def lines() -> tuple[Line, ...]:
        return episode_lines(world, budget, tree.results, spent, priced, unit, evaluation_limit, reserve_jobs)

    tree.add_node(0)
    quality_by_evals = np.full(budget + 1, np.nan)
    quality_by_evals[0] = world.true_quality(0)
    max_decisions = 20 * budget + 1000  # guards against a policy that never evaluates
    current = priced_view(tree, task_order, lines())
    while decisions < max_decisions and not spent_out(lines()):  # the runner's hard stop, `_budget_spent`
        start = time.perf_counter()
        action = policy.next_action(current, next_rng(decisions))
        seconds += time.perf_counter() - start
        decisions += 1
        if isinstance(action, Stop):
            break
        if isinstance(action, Expand):
            for parent in action.parents:  # a group iteration (GEA's ExpandGroup): one child per parent
                cost = world.expansion_price(cast(int, parent))
                child = world.spawn(cast(int, parent))
                tree.add_node(child, parent, valid=world.valid[child])
                spent.add("expansions", cost)
                expansions += 1
        elif isinstance(action, Evaluate):
            node, task = cast(int, action.node), cast(int, action.task)
            spent.add("evaluations", world.evaluation_price(node))
            tree.record(node, task, world.evaluate(node, task))
        current = priced_view(tree, task_order, lines())
        if trace and isinstance(action, Evaluate) and tree.results <= budget:
            quality_by_evals[tree.results] = world.true_quality(cast(int, policy.best(current)))
    used = tree.results
    final = policy.best(current)
    final_quality = world.true_quality(cast(int, final)) if final is not None else float("nan")
    quality_by_evals[min(used, budget)] = final_quality
    # a policy that stopped early keeps its last final agent for the rest of the budget
    filled = np.maximum.accumulate(np.where(np.isnan(quality_by_evals), -np.inf, np.arange(budget + 1)))
    quality_by_evals = quality_by_evals[filled.astype(int)]
    valid_nodes = [i for i, ok in enumerate(world.valid) if ok]
    return EpisodeResult(
        final_quality=final_quality,
        best_quality=max(world.true_quality(i) for i in valid_nodes),
        quality_by_evals=quality_by_evals,
        nodes=len(world.valid),
        evaluations=used,
        decisions=decisions,
        decision_seconds=seconds,
        expansions=expansions,
        units=spent.total if priced else float(used),
        cmp_correlation=estimate_correlation(policy, current, world),
        largest_job=spent.largest,
    )


def true_cmp(world: World, size: int) -> np.ndarray:
    """True clade metaproductivity of nodes `0..size-1`: the best true quality over the valid nodes
    of the node's clade (itself and its descendants) in the final tree, as the HGM paper scores its
    estimates; -inf for a clade without a valid node. One reverse pass (parents come first)."""
    quality = np.array([world.true_quality(i) if world.valid[i] else -np.inf for i in range(size)])
    best = quality.copy()
    for child in range(size - 1, 0, -1):
        up = world.parent[child]
        best[up] = max(best[up], best[child])
    return best


def pearson(estimate: np.ndarray, truth: np.ndarray) -> float:
    """Pearson correlation; nan with fewer than 3 nodes or a constant side."""
    if estimate.size < 3 or np.ptp(estimate) == 0 or np.ptp(truth) == 0:
        return float("nan")
    return float(np.corrcoef(estimate, truth)[0, 1])


def estimate_correlation(policy: object, view: SearchView, world: World) -> float:
    """Correlation of the policy's CMP estimate (`policy.cmp_estimate(view)`) with the true CMP over the
    valid nodes with at least one result of their own; nan for a policy without an estimate."""
    estimator = getattr(policy, "cmp_estimate", None)
    if estimator is None:
        return float("nan")
    nodes = view.valid & (view.done > 0)
    return pearson(np.asarray(estimator(view), float)[nodes], true_cmp(world, view.size)[nodes])


def compare_policies(
    policies: Mapping[str, Policy],
    params: WorldFamily,
    budget: int,
    seeds: Sequence[int],
    expand_cost: float = 0.0,
    trace: bool = True,
) -> dict[str, list[EpisodeResult]]:
    """Each policy on the same worlds (same seeds), on equal budgets (evaluations, or units when
    expansions cost `expand_cost`)."""
    return {
        name: [run_episode(policy, params, budget, seed, expand_cost, trace) for seed in seeds]
        for name, policy in policies.items()
    }
