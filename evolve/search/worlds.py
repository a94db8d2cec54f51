"""A second world family for the search benchmark: other distributions than the project's
`SyntheticWorld`, so a policy tuned on one family is checked on another.

What differs, and why each one matters to a cost-aware policy:
- task difficulty is bimodal: a share of easy tasks and of hard ones (logit ±`difficulty_gap`), not one
  normal spread, so results are less informative per task and a node's own mean is noisier;
- node quality moves by heavy-tailed steps (Student t, `step_df` degrees of freedom): most children are a
  little worse, a few much better or much worse; productivity is heritable with no trade-off;
- prices are noisy: each job's price is its nominal price times a mean-one log-normal factor
  (`price_noise`), so the measured price has to be learnt from the jobs that finished;
- prices vary per node: every node has a heritable speed factor (a child's is its parent's times a
  mean-one log-normal, `speed_sd`); evaluating a node costs its factor, and expanding a node costs C
  times its factor, so slow lineages are dear to grow and to measure.
The nominal prices (1 per evaluation, C per expansion of the root) are what a plan would say: the
episode's prior.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from evolve.search.simulate import LogitWorld


@dataclass(frozen=True)
class RuggedParams:
    """The second family's parameters; set before any policy ran on it, not tuned to one."""

    n_tasks: int = 100
    easy_share: float = 0.5
    """Share of easy tasks; the rest are hard."""
    difficulty_gap: float = 2.0
    """Easy tasks sit at logit -gap, hard ones at +gap (each with a 0.5 spread)."""
    root_skill: float = -0.5
    step_location: float = -0.15
    step_scale: float = 0.3
    step_df: float = 3.0
    """Degrees of freedom of the Student t step (3: heavy tails)."""
    productivity_sd: float = 0.1
    invalid_rate: float = 0.35
    price_noise: float = 0.5
    """Log-normal sigma of each job's price around its nominal price."""
    speed_sd: float = 0.25
    """Log-normal sigma of a child's speed factor around its parent's (prices per node)."""

    @property
    def family(self) -> str:
        return "rugged"

    def build(self, rng: np.random.Generator, expand_cost: float) -> RuggedWorld:
        return RuggedWorld(self, rng, expand_cost)


def _mean_one_lognormal(rng: np.random.Generator, sigma: float) -> float:
    return float(rng.lognormal(-0.5 * sigma**2, sigma)) if sigma > 0 else 1.0


class RuggedWorld(LogitWorld):
    """One seeded world of the second family (the interface of `simulate.World`)."""

    def __init__(self, params: RuggedParams, rng: np.random.Generator, expand_cost: float = 0.0) -> None:
        easy = rng.random(params.n_tasks) < params.easy_share
        difficulty = np.where(easy, -params.difficulty_gap, params.difficulty_gap) + rng.normal(
            0, 0.5, params.n_tasks
        )
        super().__init__(rng, difficulty, params.root_skill, expand_cost)
        self.params = params
        self._price_rng = np.random.default_rng(rng.integers(2**63))  # prices never shift the outcomes' draws
        self.speed: list[float] = [1.0]

    def spawn(self, parent: int) -> int:
        p = self.params
        step = p.step_location + p.step_scale * float(self._rng.standard_t(p.step_df))
        productivity = self.productivity[parent] + p.productivity_sd * float(self._rng.standard_normal())
        self.productivity.append(productivity)
        self.skill.append(self.skill[parent] + productivity + step)
        self.speed.append(self.speed[parent] * _mean_one_lognormal(self._rng, p.speed_sd))
        self.valid.append(bool(self._rng.random() >= p.invalid_rate))
        self.parent.append(parent)
        return len(self.skill) - 1

    def evaluation_price(self, node: int) -> float:
        return self.speed[node] * _mean_one_lognormal(self._price_rng, self.params.price_noise)

    def expansion_price(self, parent: int) -> float:
        return (
            self.expand_cost
            * self.speed[parent]
            * _mean_one_lognormal(self._price_rng, self.params.price_noise)
        )
