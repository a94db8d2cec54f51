"""The policies' parameters, defined once: the run config's `[policy.hgm]` and `[policy.dgm]` sections
load into these classes (evolve.config), and the policies take them as they are.

pydantic dataclasses: frozen, unknown keys refused, each bound checked on construction (a bad value
raises a `ValueError` naming the field), whether built by hand or from TOML.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import ConfigDict, Field, model_validator
from pydantic.dataclasses import dataclass

_STRICT = ConfigDict(extra="forbid")


@dataclass(frozen=True, config=_STRICT)
class HGMParams:
    """Huxley-Gödel Machine policy parameters (docs/design.md §Search)."""

    alpha: Annotated[float, Field(gt=0.0, le=1.0)] = 0.6
    """Widening exponent: expand iff N^alpha >= |T|."""
    cooldown: bool = True
    """Use the temperature tau = B / max(B - n, 1) in Thompson sampling."""
    epsilon: Annotated[float, Field(gt=0.0, lt=1.0)] = 0.25
    """Quantile of Beta(1+s, 1+f) used to choose the final agent."""
    min_evals: Annotated[int, Field(ge=1)] = 5
    """A node needs this many evaluations to be chosen as the final agent."""
    expand_unfailed: bool = True
    """Expand a node that has failed none of its finished evaluations while tasks are left (the paper's
    rule). False: such a node (a new child among them) is evaluated further first, for the expansion's
    diagnosis reads the node's own failures and has nothing to read without one (evolve.engine.diagnosis)."""
    expand_failures: Annotated[int, Field(ge=1)] = 1
    """With `expand_unfailed` off, the failed evaluations a node needs before it is expanded (or every task
    finished): an expansion that contrasts failing with passing runs (spectra, a live re-run of several
    failures) has one failure to read after the first."""


@dataclass(frozen=True, config=_STRICT)
class HGMCostParams(HGMParams):
    """HGM that pays the measured price of an expansion (evolve.search.costaware). The price itself is
    the run's, measured from its finished jobs (evolve.search.spend); nothing here sets it."""

    price_exponent: Annotated[float, Field(ge=-2.0, le=2.0)] = -0.5
    """β: expand iff (N / C^β)^alpha >= |T|, C the measured expansion price in evaluations (0: HGM's rule;
    -0.5, chosen on worlds 3000-4199 of both families and checked on 6000-7199: (√C·N)^alpha >= |T|;
    docs/search.md "Search that pays for what it spends")."""
    reserve: Annotated[float, Field(ge=0.0, lt=1.0)] = 0.0
    """No expansion starts that would leave less than reserve x (1 - 1/C) of the binding budget (0: none;
    every reserve tried lost to HGM on the tuning worlds)."""

    @model_validator(mode="before")
    @classmethod
    def _older_keys(cls, values: object) -> object:
        """Runs made before prices were measured wrote a hand-set `expand_cost` and an
        `evals_per_node` into their run.toml; they are read and dropped (the price is the run's own)."""
        if isinstance(values, dict):
            return {key: value for key, value in values.items() if key not in LEGACY_KEYS}
        return values


LEGACY_KEYS = frozenset({"expand_cost", "evals_per_node"})


@dataclass(frozen=True, config=_STRICT)
class StagedParams:
    """DGM's staged evaluation, shared by the DGM, greedy and random policies."""

    stages: tuple[Annotated[int, Field(ge=1)], ...] = (10, 50)
    """Tasks per evaluation stage before the rest."""
    stage_threshold: Annotated[float, Field(ge=0.0, le=1.0)] = 0.4
    """Fraction solved in a stage needed to run the next stage."""
    top_k_full: Annotated[int, Field(ge=1)] = 2
    """After the last stage, nodes among the top k get the remaining tasks."""

    @model_validator(mode="after")
    def _some_stage(self) -> StagedParams:
        if not self.stages:
            raise ValueError("stages must name at least one stage size")
        return self


@dataclass(frozen=True, config=_STRICT)
class DGMParams(StagedParams):
    """Darwin Gödel Machine parent selection plus its staged evaluation."""

    lam: Annotated[float, Field(gt=0.0)] = 10.0
    """Sigmoid steepness lambda."""
    alpha0: Annotated[float, Field(ge=0.0, le=1.0)] = 0.5
    """Sigmoid midpoint alpha_0."""

    @property
    def staged(self) -> StagedParams:
        return StagedParams(self.stages, self.stage_threshold, self.top_k_full)


@dataclass(frozen=True, config=_STRICT)
class GEAParams(StagedParams):
    """Group-Evolving Agents (arXiv 2602.04837): parent-group selection plus DGM's staged evaluation."""

    group_size: Annotated[int, Field(ge=1)] = 2
    """K: parents per group iteration, and so offspring per iteration (one per parent)."""
    neighbours: Annotated[int, Field(ge=1)] = 4
    """M: novelty is the mean cosine distance to an agent's M nearest archive members."""
    epsilon: Annotated[float, Field(gt=0.0)] = 1e-8
    """ε in the cosine distance's denominator (an all-fail vector is then at distance 1 from every agent)."""
