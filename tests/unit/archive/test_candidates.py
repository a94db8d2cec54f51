"""Candidate records (evolve.archive.candidates): a template candidate says which template made it, where, and
what it cost; a record written before those fields reads as a model candidate."""

from __future__ import annotations

import json

from evolve.archive.candidates import Candidate, read_candidates, render_candidates, write_candidates


def test_a_template_candidate_is_shown_with_its_template_location_cost_and_fixes(tmp_path):
    made = [
        Candidate(
            1,
            None,
            True,
            None,
            None,
            "code",
            2,
            25.0,
            source="template",
            template="slice: given[:0] -> given (line 20)",
            location="bot/main.py:20",
            tokens=53,
            fixed=1,
        ),
        Candidate(
            2, 0.2, False, "rerun", "re-run live, it passed none", "code", 4, 90.0, tokens=900, fixed=0
        ),
    ]
    write_candidates(tmp_path, made)
    assert read_candidates(tmp_path) == made
    first = (
        "  1. template slice: given[:0] -> given (line 20) at bot/main.py:20  code, 2 lines, 25 s, 53 "
        "tokens, "
        "fixed 1: child"
    )
    assert render_candidates(made) == [
        first,
        (
            "  2. t=0.20  code, 4 lines, 90 s, 900 tokens, fixed 0: refused at rerun: re-run live, it passed "
            "none"
        ),
    ]


def test_a_record_from_before_the_sources_reads_as_a_model_candidate(tmp_path):
    old = {
        "number": 1,
        "temperature": 0.6,
        "chosen": False,
        "stage": "applies",
        "reason": "empty diff",
        "kind": "none",
        "changed_lines": 0,
        "seconds": 3.0,
    }
    (tmp_path / "candidates.jsonl").write_text(json.dumps(old) + "\n")
    (record,) = read_candidates(tmp_path)
    assert (record.source, record.location, record.tokens, record.fixed) == ("model", None, 0, None)
    assert render_candidates([record]) == ["  1. t=0.60  none, 0 lines, 3 s: refused at applies: empty diff"]


def test_a_screened_template_says_so():
    record = Candidate(
        1,
        None,
        False,
        "own tests",
        "they fail",
        "code",
        1,
        4.0,
        source="screen",
        template="operator: - -> + (line 4)",
        location="agent/calc.py:4",
    )
    said = "  1. screened template operator: - -> + (line 4) at agent/calc.py:4  code, 1 lines, 4 s: "
    assert render_candidates([record]) == [f"{said}refused at own tests: they fail"]
