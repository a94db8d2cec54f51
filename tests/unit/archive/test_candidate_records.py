"""The expansion's candidate records, read back from the job's log (beside agent-written files): a line
that is not a candidate's record is left out, the others are read."""

from __future__ import annotations

import json
from dataclasses import asdict

from evolve.archive.candidates import Candidate, read_candidates, write_candidates

ONE = Candidate(1, 0.2, False, "applies", "empty diff", "none", 0, 3.5)
TWO = Candidate(2, 1.0, True, None, None, "code", 4, 12.0, tokens=900, fixed=2)
TEMPLATE = Candidate(
    3,
    None,
    False,
    "own tests",
    "failed",
    "code",
    1,
    2.0,
    source="template",
    template="number: 64 -> 640",
    location="agent/x.py:12",
)


def test_the_records_written_are_read_back(tmp_path):
    write_candidates(tmp_path, [ONE, TWO, TEMPLATE])
    assert read_candidates(tmp_path) == [ONE, TWO, TEMPLATE]
    assert read_candidates(tmp_path / "missing") == []


def test_a_line_of_another_shape_is_left_out(tmp_path):
    wrong = [
        {**asdict(ONE), "number": "1"},
        {**asdict(ONE), "chosen": 1},
        {**asdict(ONE), "temperature": "hot"},
        {"number": 3},
        [1, 2],
    ]
    hostile = ["[" * 100_000, '{"number": ' + "9" * 5_000 + "}"]
    lines = [json.dumps(asdict(ONE)), *map(json.dumps, wrong), *hostile, json.dumps(asdict(TWO))]
    (tmp_path / "candidates.jsonl").write_text("\n".join(lines) + "\n")
    assert read_candidates(tmp_path) == [ONE, TWO]
