"""The formulas of docs/design.md §Search as pure functions on numpy arrays; each one cites its equation.

Nothing here mutates its inputs: clade counts are fresh arrays, never an alias of a node's own
counts (the public HGM code extends a node's own result list with its descendants' results, so
repeated estimates inflate it; tests/unit/search pins this).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def clade_counts(
    parent: Sequence[int] | np.ndarray, own_successes: np.ndarray, own_failures: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """`S(a) = Σ s(a')`, `F(a) = Σ f(a')` over `a' ∈ C(a)`, a and all its descendants.

    (docs/design.md §Search; HGM's clade-metaproductivity estimate.)

    `parent[i]` is the index of node i's parent (-1 for a root) and parents come before their
    children, so one reverse pass adds every node's clade into its parent's: O(nodes).
    Returns new arrays; the inputs are left as they were.
    """
    parents = np.asarray(parent, dtype=np.int64).tolist()
    clade_s = np.asarray(own_successes, dtype=np.int64).tolist()
    clade_f = np.asarray(own_failures, dtype=np.int64).tolist()
    for child in range(len(parents) - 1, 0, -1):
        up = parents[child]
        if up >= 0:
            clade_s[up] += clade_s[child]
            clade_f[up] += clade_f[child]
    return np.array(clade_s, dtype=np.int64), np.array(clade_f, dtype=np.int64)


def should_expand(evaluations: int, tree_size: int, alpha: float) -> bool:
    """The widening rule (docs/design.md §Search; HGM's expansion/evaluation decision): expand iff
    `N^α ≥ |T|`.

    `evaluations` is N (finished plus in flight), `tree_size` is |T| (nodes plus pending expansions).
    """
    return float(evaluations) ** alpha >= tree_size


def temperature(budget: int, used: int) -> float:
    """The cool-down `τ = B / max(B − n, 1)`: 1 at the start, B at the end.

    (docs/design.md §Search; the HGM paper uses it, the public code has it off.)
    """
    return budget / max(budget - used, 1)


def thompson_argmax(
    rng: np.random.Generator, successes: np.ndarray, failures: np.ndarray, tau: float, mask: np.ndarray
) -> int:
    """Index of `argmax θ_a`, `θ_a ~ Beta(τ(1+S_a), τ(1+F_a))`, over the nodes where `mask` holds.

    (docs/design.md §Search; HGM's Thompson sampling.) One vectorised draw over the candidates; `mask` must
    select at least one node.
    """
    candidates = np.flatnonzero(mask)
    if candidates.size == 0:
        raise ValueError("thompson_argmax needs at least one candidate")
    a = tau * (1.0 + successes[candidates])
    b = tau * (1.0 + failures[candidates])
    theta = rng.beta(a, b)
    return int(candidates[int(np.argmax(theta))])


def beta_quantile(successes: np.ndarray, failures: np.ndarray, epsilon: float) -> np.ndarray:
    """The ε-quantile of `Beta(1+s, 1+f)` per node (docs/design.md §Search, HGM's "best belief" final
    agent)."""
    from scipy.special import betaincinv  # slow to import: loaded by the first estimate, not by every command

    return betaincinv(1.0 + np.asarray(successes, float), 1.0 + np.asarray(failures, float), epsilon)


def quantile_argmax(successes: np.ndarray, failures: np.ndarray, epsilon: float) -> int:
    """`argmax` of `beta_quantile(successes, failures, epsilon)`, the first index on ties.

    The quantile rises with s and falls with f, so a node another beats on both (s' ≥ s, f' ≤ f, not
    equal) never wins and a repeated (s, f) never beats its first: only the front is scored (per s
    the fewest f, first index; kept when fewer than at every larger s). O(nodes) integer work plus
    `betaincinv` on at most tasks + 1 values, not on every node.
    """
    s, f = np.asarray(successes, np.int64), np.asarray(failures, np.int64)
    none = np.iinfo(np.int64).max
    fewest = np.full(int(s.max()) + 1, none)
    np.minimum.at(fewest, s, f)
    first = np.full(fewest.size, s.size)
    at = np.flatnonzero(f == fewest[s])
    np.minimum.at(first, s[at], at)
    fewest_above = np.r_[np.minimum.accumulate(fewest[::-1])[::-1][1:], none]
    front = first[(first < s.size) & (fewest < fewest_above)]
    scores = beta_quantile(s[front], f[front], epsilon)
    return int(front[scores == scores.max()].min())


def dgm_parent_weights(
    accuracy: np.ndarray, valid_children: np.ndarray, lam: float, alpha0: float
) -> np.ndarray:
    """DGM parent probabilities `p_i ∝ sigmoid(λ(α_i − α0)) / (1 + n_i)`, with `α_i = 1` excluded
    (docs/design.md §Search, the DGM baseline).

    Returns the normalised probabilities (all zero when no node is eligible).
    """
    from scipy.special import expit  # slow to import (see `beta_quantile`)

    accuracy = np.asarray(accuracy, dtype=float)
    weights = expit(lam * (accuracy - alpha0)) / (1.0 + np.asarray(valid_children, dtype=float))
    weights = np.where(accuracy >= 1.0, 0.0, weights)
    total = weights.sum()
    return weights / total if total > 0 else weights


def clade_posterior_mean(clade_successes: np.ndarray | None, clade_failures: np.ndarray | None) -> np.ndarray:
    """`(1 + S) / (2 + S + F)`: the mean of HGM's clade estimate `Beta(1+S, 1+F)`
    (docs/design.md §Search)."""
    if clade_successes is None or clade_failures is None:
        raise ValueError("a SearchView without clade counts")
    s, f = np.asarray(clade_successes, float), np.asarray(clade_failures, float)
    return (1.0 + s) / (2.0 + s + f)


def mean_accuracy(successes: np.ndarray, failures: np.ndarray) -> np.ndarray:
    """`α_i = s_i / (s_i + f_i)`, 0 for a node without evaluations."""
    done = successes + failures
    return np.divide(successes, done, out=np.zeros(len(done), dtype=float), where=done > 0)
