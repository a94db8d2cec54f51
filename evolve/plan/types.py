"""The values of a plan: what one job uses, how many jobs a run will start, and what that costs."""

from __future__ import annotations

from dataclasses import dataclass

from evolve.llm.types import Role


@dataclass(frozen=True)
class Tokens:
    """Model tokens, input (prompt, cached included) and output (completion)."""

    input: float = 0.0
    output: float = 0.0

    @property
    def total(self) -> float:
        return self.input + self.output

    def times(self, factor: float) -> Tokens:
        return Tokens(self.input * factor, self.output * factor)

    def plus(self, other: Tokens) -> Tokens:
        return Tokens(self.input + other.input, self.output + other.output)

    def capped(self, cap: float) -> Tokens:
        """At most `cap` tokens in all (the gateway's per-job budget), the input/output ratio kept."""
        if self.total <= cap or self.total <= 0:
            return self
        return self.times(cap / self.total)


@dataclass(frozen=True)
class RoleTokens:
    """Tokens of one job by model role: an evaluation uses `solve` only; an expansion `diagnose`,
    `modify`, and `solve` (its validation solves a smoke task)."""

    diagnose: Tokens = Tokens()
    modify: Tokens = Tokens()
    solve: Tokens = Tokens()

    def of(self, role: Role) -> Tokens:
        tokens: Tokens = getattr(self, role)
        return tokens

    @property
    def total(self) -> float:
        return self.diagnose.total + self.modify.total + self.solve.total


@dataclass(frozen=True)
class JobProfile:
    """What one evaluation and one expansion use on average, and where the numbers come from."""

    evaluation: RoleTokens
    expansion: RoleTokens
    evaluation_minutes: float
    """Wall time of one evaluation job (solve and grade), start to end."""
    expansion_minutes: float
    """Wall time of one expansion job (diagnose, modify, validate)."""
    source: str
    """`measured: <runs> (...)` or `default for <suite>` (evolve/plan/profiles.py says how they were set)."""


@dataclass(frozen=True)
class Counts:
    """How many jobs the run will start, at most, under its budgets."""

    search_evaluations: int
    heldout_evaluations: int
    expansions: int
    search_tasks: int
    heldout_tasks: int
    exact_tasks: bool
    """False when the task counts are the suite's published size (its dataset is not here to count)."""
    expansion_rule: str
    """How `expansions` was found (the budget, HGM's widening rule, the staged first stage)."""

    @property
    def evaluations(self) -> int:
        return self.search_evaluations + self.heldout_evaluations


@dataclass(frozen=True)
class RoleCost:
    """One role's expected tokens and dollars over the whole run."""

    role: Role
    model: str
    tokens: Tokens
    dollars: float
    priced: bool
    """False for a hosted model with no known price (counted as $0: give its price in the config)."""


@dataclass(frozen=True)
class Images:
    """Container images the run needs, and the disk they take."""

    names: tuple[str, ...]
    unnamed: int
    """Images needed whose names are not known here (SWE-bench instances of a dataset not loaded)."""
    disk_gb_low: float
    disk_gb_high: float


@dataclass(frozen=True)
class Plan:
    """What a run will need and cost, before it starts."""

    config_name: str
    suite: str
    policy: str
    counts: Counts
    profile: JobProfile
    roles: tuple[RoleCost, ...]
    container_hours: float
    cpu_hours: float
    wall_hours: float
    """Container-hours spread over `executor.concurrency` jobs in flight."""
    concurrency: int
    images: Images
    dollar_budget: float | None
    """`budget.dollars`: the run stops there even when the plan says more."""
    missing: tuple[str, ...]
    """Prerequisites that are not met now (one line each)."""
    checked: bool
    """Whether prerequisites were looked for (`evolve plan --offline` and `evolve run` do not)."""

    @property
    def dollars(self) -> float:
        return sum(r.dollars for r in self.roles)

    @property
    def tokens(self) -> Tokens:
        total = Tokens()
        for role in self.roles:
            total = total.plus(role.tokens)
        return total
