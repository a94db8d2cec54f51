"""No oracle of the fixed shape family tells a planted canary from the test it copies better than chance,
over seeded plantings of the builtin suite's hidden files, as each grader plants them (the statistic
`evolve bench canaries` prints); and the statistic would say so of one that could."""

from __future__ import annotations

import random

import pytest

from evolve.tasks import canary_oracles as oracles
from evolve.tasks.grader_canaries import _changed_text, plant_among, restore, restore_all, selects

SEEDS = range(40)
BOUND = 1e-3
"""The two-sided binomial tail below which an oracle counts as better (or worse) than a coin."""


@pytest.fixture(scope="module")
def files():
    return oracles.builtin_files()


@pytest.mark.parametrize("mode", oracles.MODES)
def test_no_shape_oracle_tells_a_canary_from_its_twin_better_than_chance(files, mode):
    pairs = oracles.plantings(files, SEEDS, mode)
    assert len(pairs) >= 100
    for found in oracles.score(pairs):
        if found.family == "shape":
            assert found.p_two_sided >= BOUND, found.as_json()


def test_the_statistic_flags_an_oracle_that_reads_a_planting_rule(files):
    """Pairs of a planter that always put the canary after its twin (the old rule, in effect)."""
    later = [pair for pair in oracles.plantings(files, SEEDS, "swebench") if pair.canary_is_second]
    scores = {found.oracle: found for found in oracles.score(later)}
    assert scores["later in the file"].hits == len(later) and scores["later in the file"].p_value < 1e-30


def test_a_changed_constant_keeps_its_kind_and_can_be_changed_back():
    rng = random.Random(0)
    assert _changed_text(b"True", rng, {}) == b"False" and _changed_text(b"False", rng, {}) == b"True"
    for text in (b"7", b"19", b"400", b"8.25", b"0.05", b"'aB-1'", b"b'ab'"):
        for _ in range(20):
            new = _changed_text(text, rng, {})
            assert new != text and len(new) == len(text)
            assert [(chr(c).isdigit(), chr(c).islower()) for c in new] == [
                (chr(c).isdigit(), chr(c).islower()) for c in text
            ]
            back = {_changed_text(new, rng, {}) for _ in range(1500)}
            assert text in back  # the change can be made back, so neither of a pair is the original by form


def test_a_pair_is_renamed_and_a_report_is_read_back_under_the_real_name():
    source = (
        b"def test_total():\n    assert total(2) == 20\n\n\ndef test_empty():\n    assert total(0) == 0\n"
    )
    planted, ids, renames = plant_among(source, "t.py", random.Random(3), count=1)
    ((canary, own),) = ids.items()
    ((new, also_own),) = renames.items()
    assert own == also_own == "t.py::test_total" and b"def test_total(" not in planted
    records = [{"test": new, "when": "call", "outcome": "passed"}, {"value_of": new + "[1]"}]
    restored, out = restore_all(records, f"PASSED {new}\nFAILED {canary}", renames)
    assert restored[0]["test"] == "t.py::test_total" and restored[1]["value_of"] == "t.py::test_total[1]"
    assert out.splitlines()[0] == "PASSED t.py::test_total"
    assert restore("other/t.py::test_empty", renames) == "other/t.py::test_empty"


@pytest.mark.parametrize(
    ("command", "picks"),
    [
        ("python3 -m pytest -q tests", False),
        ("pytest t.py::test_a", True),
        ("pytest -k lru tests", True),
        ("pytest --deselect t.py::x", True),
        ("pytest -m slow", False),
    ],
)
def test_no_test_is_renamed_where_the_command_picks_tests_by_name(command, picks):
    assert selects(command) is picks


def test_no_new_name_takes_a_name_the_file_had(files):
    """A second pair must not be named like the first pair's renamed test (it would read its reports)."""
    pair = (
        b"def test_add():\n    assert add(2, 3) == 5\n\n\ndef test_mean():\n    assert mean([1, 2, 3]) == 2\n"
    )
    for rel, text in [*files, ("t.py", pair)]:
        source = text if isinstance(text, bytes) else text.encode()
        own = {line.split("(")[0][4:] for line in source.decode().splitlines() if line.startswith("def test")}
        for seed in range(60):
            _, ids, renames = plant_among(source, rel, random.Random(seed))
            new = {test.rsplit("::", 1)[-1] for test in [*ids, *renames]}
            assert not new & own, (rel, seed, new & own)
