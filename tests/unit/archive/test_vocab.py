"""The vocabulary: members equal the strings earlier versions stored, and are stored as those strings."""

from __future__ import annotations

import sqlite3

import pytest

from evolve.archive.vocab import (
    JobKind,
    JobState,
    NodeStatus,
    Outcome,
    Split,
    StopReason,
    UnknownValue,
    counts_as,
    parse,
)


def test_members_are_the_strings_runs_already_hold():
    assert [o.value for o in Outcome] == ["pass", "fail", "timeout", "error", "infra", "forged"]
    assert [k.value for k in JobKind] == ["evaluate", "expand"]
    assert [s.value for s in JobState] == ["started", "finished", "failed", "cancelled"]
    assert [s.value for s in Split] == ["dev", "heldout"]
    assert [s.value for s in NodeStatus] == ["valid", "invalid"]
    assert Outcome.PASS == "pass" and f"{JobKind.EXPAND}" == "expand" and {"dev": 1}[Split.DEV] == 1
    assert StopReason.STOP_REQUESTED == "stop requested" and StopReason.CANCELLED == "cancelled"


def test_a_member_is_stored_as_plain_text(run, code):
    node = run.add_node(code({"a.py": "x\n"}))
    run.record_evaluation(node.id, "t1", Outcome.TIMEOUT, split=Split.HELDOUT)
    run.start_job(JobKind.EXPAND, node.id)
    with sqlite3.connect(run.path / "run.sqlite") as db:
        assert db.execute("SELECT outcome, typeof(outcome), split FROM evaluations").fetchone() == (
            "timeout",
            "text",
            "heldout",
        )
        assert db.execute("SELECT kind, state FROM jobs").fetchone() == ("expand", "started")
    (evaluation,) = run.evaluations()
    assert evaluation.outcome is Outcome.TIMEOUT and evaluation.split is Split.HELDOUT
    assert run.jobs()[0].kind is JobKind.EXPAND and run.node(node.id).status is NodeStatus.VALID


def test_what_counts():
    assert [counts_as(o) for o in ("pass", "fail", "timeout", "error", "infra")] == [
        True,
        False,
        False,
        False,
        None,
    ]
    assert Outcome.INFRA.counts is None and Outcome.ERROR.counts is False
    with pytest.raises(ValueError, match="unknown outcome 'skip'"):
        counts_as("skip")


def test_parse_names_the_value_and_the_column():
    assert parse(JobKind, "expand", "jobs.kind") is JobKind.EXPAND
    with pytest.raises(
        UnknownValue,
        match=r"^unknown value 'grade' in column jobs.kind \(this evolve knows "
        r"evaluate, expand\)$",
    ):
        parse(JobKind, "grade", "jobs.kind")
    with pytest.raises(UnknownValue, match="unknown value 3 in column evaluations.outcome"):
        parse(Outcome, 3, "evaluations.outcome")
