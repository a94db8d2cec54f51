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
    """Huxley-Gödel Machine policy parameters (DESIGN.md §5)."""

    alpha: Annotated[float, Field(gt=0.0, le=1.0)] = 0.6
    """Widening exponent: expand iff N^alpha >= |T|."""
    cooldown: bool = True
    """Use the temperature tau = B / max(B - n, 1) in Thompson sampling."""
    epsilon: Annotated[float, Field(gt=0.0, lt=1.0)] = 0.25
    """Quantile of Beta(1+s, 1+f) used to choose the final agent."""
    min_evals: Annotated[int, Field(ge=1)] = 5
    """A node needs this many evaluations to be chosen as the final agent."""


@dataclass(frozen=True, config=_STRICT)
class HGMCostParams(HGMParams):
    """HGM with priced expansions (evolve.search.costaware)."""

    alpha: Annotated[float, Field(gt=0.0, le=1.0)] = 1.0
    """Widening exponent: expand iff (N / evals_per_node)^alpha >= |T| (1: a fixed quota per node)."""
    expand_cost: Annotated[float, Field(ge=1.0)] = 4.0
    """An expansion's cost in evaluations (the quickstart: about 4x an evaluation's wall time;
    measure a run's with `evolve bench search --expand-cost-from RUN`)."""
    evals_per_node: Annotated[float, Field(ge=1.0)] = 2.0
    """Evaluations each node is due before the tree grows again (a node costs expand_cost + this)."""
    reserve: Annotated[float, Field(ge=0.0, lt=1.0)] = 0.1
    """Share of the budget kept for evaluations only: no expansion starts that would leave less."""


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
