"""The canary-oracle statistic of the compiled runners' canaries (evolve.tasks.canary_oracles_text): no
shape oracle tells a canary from its twin better than chance over seeded plantings of the Polyglot
fixture's test files (what `evolve bench canaries --polyglot DIR` prints for a checkout), and the statistic
would say so of one that could."""

from __future__ import annotations

from pathlib import Path

import pytest

from evolve.tasks import canary_oracles_text as oracles

FIXTURE = Path(__file__).resolve().parents[2] / "data" / "polyglot"
SEEDS = range(40)
BOUND = 1e-3
"""The two-sided binomial tail below which an oracle counts as better (or worse) than a coin."""


@pytest.fixture(scope="module")
def pairs():
    return oracles.plantings(oracles.polyglot_files(FIXTURE), SEEDS)


def test_no_shape_oracle_tells_a_compiled_canary_from_its_twin_better_than_chance(pairs):
    assert len(pairs) >= 200 and {p.protocol for p in pairs} == {"catch2", "libtest", "junit", "jest"}
    for found in oracles.score(pairs):
        if found.family == "shape":
            assert found.p_two_sided >= BOUND, found.as_json()


def test_the_statistic_flags_an_oracle_that_reads_a_planting_rule(pairs):
    """Pairs of a planter that always put the canary right after its twin (the old rule, in effect)."""
    beside = [p for p in pairs if p.canary_is_second and p.between == 0]
    scores = {found.oracle: found for found in oracles.score(beside)}
    assert (
        scores["right after its twin"].hits == len(beside) and scores["right after its twin"].p_value < 1e-20
    )


def test_the_bench_reads_a_checkout_and_counts_the_languages_that_give_pairs():
    report = oracles.bench(FIXTURE, 2)
    assert report["files"] == 5 and "gotest" in report["languages"] and report["pairs"] == 16
