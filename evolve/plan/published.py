"""Per-job figures calibrated on the published runs: what `evolve plan` uses for a suite and
solving model when no earlier run of the user's own is there to measure.

Each entry is the mean job over the published bundles of that suite and model (archive/published),
measured as `evolve plan --from RUN` measures a run (evolve.plan.profiles: tokens from the gateway's
counts, wall time from the job rows, the evaluations' role and input/output split from their recorded
exchanges). A bundle keeps only its evaluations' exchanges, so an expansion's split over roles is the
suite default's proportions, its total the measured one. `tests/unit/plan/test_published.py` measures
the bundles again and checks these figures, and that the plan of evolve/configs/humaneval-cpu.toml is
within 25 % of what its published run spent.

- humaneval, Qwen2.5-Coder-0.5B-Instruct (embedded, llama.cpp on 2 CPU cores): humaneval-cpu (214
  evaluations, 12 expansions) and quickstart-embedded (15, 3): 2,076 tokens and 0.71 min per
  evaluation, 17,638 tokens and 2.45 min per expansion (the 0.5B model's improve loop re-reads the
  agent's code at every step; the older default said 4,498 tokens and 3.1 min).
"""

from __future__ import annotations

from evolve.plan.types import JobProfile, RoleTokens, Tokens

BUNDLES: dict[tuple[str, str], tuple[str, ...]] = {
    ("humaneval", "qwen2.5-coder-0.5b-instruct"): (
        "humaneval-cpu.evolve.tar.gz",
        "quickstart-embedded.evolve.tar.gz",
    ),
}
"""The published bundles (archive/published) each calibration is measured on."""

CALIBRATED: dict[tuple[str, str], JobProfile] = {
    ("humaneval", "qwen2.5-coder-0.5b-instruct"): JobProfile(
        evaluation=RoleTokens(solve=Tokens(1_655.8, 420.1)),
        expansion=RoleTokens(
            diagnose=Tokens(3_137.0, 784.2), modify=Tokens(10_587.3, 1_960.6), solve=Tokens(980.3, 188.2)
        ),
        evaluation_minutes=0.7104,
        expansion_minutes=2.4548,
        source="published: humaneval-cpu, quickstart-embedded (229 evaluations, 15 expansions)",
    ),
}


def calibrated(family: str, model: str) -> JobProfile | None:
    """The published runs' figures for a suite family and solving model, if there are any."""
    return CALIBRATED.get((family, model))
