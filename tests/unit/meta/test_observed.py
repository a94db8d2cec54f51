"""The `observed` template (evolve.meta.observed): a comparison's constant made the value a failing run read
on its other side."""

from __future__ import annotations

import numpy as np

from evolve.meta.observed import seen_values
from evolve.meta.templates import edits_at

SOURCE = """def pick(mode, size):
    if mode == "fast" or size != 3:
        return 1
    return 0
"""


def _observed(seen: dict[str, object]) -> list[str]:
    edits = edits_at(SOURCE, 2, 50, np.random.default_rng(0), near=False, seen=seen)
    return [edit.change for edit in edits if edit.template == "observed"]


def test_each_constant_is_offered_the_value_of_its_own_type_the_failing_run_read_beside_it() -> None:
    assert sorted(_observed({"mode": "slow", "size": 4})) == [
        "'fast' -> 'slow' (a failing run read mode = 'slow')",
        "3 -> 4 (a failing run read size = 4)",
    ]
    # another type, the same value, or nothing read: no edit
    assert _observed({"mode": 7, "size": 3}) == []
    assert _observed({}) == []


def test_only_a_whole_repr_of_a_plain_literal_is_a_value() -> None:
    pairs = (
        ("mode", "'slow'"),
        ("mode", "'later'"),  # the first of an expression is kept
        ("size", "4"),
        ("flag", "True"),  # booleans are the `boolean` template's
        ("path", "PosixPath('/tmp')"),  # an object's repr
        ("text", "'" + "x" * 90 + "'"),  # at the cut or over: perhaps shortened
        ("data", "b'\\x00'"),
    )
    assert seen_values(pairs, 80) == {"mode": "slow", "size": 4, "data": b"\x00"}
