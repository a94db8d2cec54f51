"""Fields only ever set to a constant (evolve.meta.fields): read by a class's methods, assigned nothing but
a literal, while a method binds a local of the same name; found from the syntax tree alone, the lines a
failing run read them ranked, and the `field` template's `self.x = x` made there."""

from __future__ import annotations

import ast
import textwrap

import numpy as np
import pytest

from evolve.meta.fields import (
    BINDER_SCORE,
    READ_SCORE,
    ConstantField,
    constant_field_locations,
    constant_fields,
)
from evolve.meta.templates import edits_at

KEPT = textwrap.dedent(
    """\
    class Relay:
        def __init__(self):
            self.limit = 0

        def start(self, limit, note):
            \"\"\"Starts.\"\"\"
            total = limit * 2
            return total

        def sent(self, text):
            if self.limit:
                return text[: self.limit]
            return text
    """
)


def fields_of(source: str, *others: str) -> list[ConstantField]:
    return constant_fields("agent/relay.py", ast.parse(source), [ast.parse(other) for other in others])


def test_a_field_read_and_only_set_to_a_constant_is_found_with_the_locals_of_its_name() -> None:
    assert fields_of(KEPT) == [
        ConstantField("agent/relay.py", "Relay", "limit", "0", (11, 12), (("start", 7),))
    ]


def test_the_binders_and_the_reads_a_failing_run_ran_are_ranked_and_nothing_it_did_not() -> None:
    (field,) = fields_of(KEPT)
    ranked = constant_field_locations([field], {("agent/relay.py", 11)})
    assert [(at.line, at.score) for at in ranked] == [(7, BINDER_SCORE), (11, READ_SCORE)]
    assert ranked[0].evidence == (
        "`self.limit` of `Relay` is read (lines 11, 12) but only ever set to 0; "
        "`start` binds a local `limit` here, a value it may be meant to keep"
    )
    assert constant_field_locations([field], {("agent/relay.py", 7)}) == []  # no failing run read it


@pytest.mark.parametrize(
    ("source", "others"),
    [
        (KEPT.replace("total = limit * 2", "self.limit = limit"), ()),  # the field keeps the local
        (KEPT.replace("total = limit * 2", "self.limit += 1"), ()),
        (KEPT.replace("total = limit * 2", "self.limit, total = 1, 2"), ()),
        (KEPT, ("def wire(relay):\n    relay.limit = 5\n",)),  # set from outside, in another file
        (KEPT.replace("class Relay:", "@dataclass\nclass Relay:"), ()),  # a generated __init__ sets it
        (KEPT.replace("total = limit * 2", "setattr(self, 'limit', limit)"), ()),
        (KEPT.replace("def start(self, limit, note):", "def start(self, size, note):"), ()),  # no such local
        (KEPT.replace("if self.limit:", "if text:").replace("self.limit]", "5]"), ()),  # never read
    ],
)
def test_a_field_set_otherwise_or_with_no_local_of_its_name_is_not_judged(source, others) -> None:
    assert fields_of(source, *others) == []


def test_the_field_template_keeps_the_parameter_before_the_first_statement_and_after_the_ranked_one() -> None:
    made = [e for e in edits_at(KEPT, 7, 40, np.random.default_rng(0)) if e.template == "field"]
    first = [e for e in made if e.change == "inserted: self.limit = limit (first)"]
    after = [e for e in made if e.change == "inserted: self.limit = limit" and e.line == 7]
    assert first and after
    assert first[0].source.splitlines()[5:8] == [
        '        """Starts."""',
        "        self.limit = limit",
        "        total = limit * 2",
    ]
    assert after[0].source.splitlines()[6:8] == ["        total = limit * 2", "        self.limit = limit"]
    assert fields_of(first[0].source) == [] and fields_of(after[0].source) == []
    # in another method no local of the name is bound: nothing to keep
    assert not [e for e in edits_at(KEPT, 11, 40, np.random.default_rng(0)) if e.template == "field"]
