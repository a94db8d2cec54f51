"""The agent-side meta procedure's engine half: the failure material it builds (bounded, seeded, only what
the agent saw) and the instructions it reads back (untrusted text: capped, cleaned, never empty)."""

import json

import numpy as np
import pytest

from evolve.archive.records import Evaluation
from evolve.meta import DiagnosisFailed, Failure, read_failure
from evolve.meta.procedure import (
    MAX_FAILURES,
    MAX_FILE_CHARS,
    MAX_INSTRUCTIONS,
    clean_instructions,
    failure_material,
)

FILES = ["agent/__main__.py", "agent/loop.py"]


def failure(task, outcome="fail", empty=False):
    return Failure(task, outcome, empty, f"[assistant] tried {task}", f"agent: limits ({task})")


def test_the_material_shows_every_outcome_each_failure_and_the_agents_files():
    failures = [failure("t1"), failure("t2", empty=True)]
    material = dict(
        failure_material(
            [("t1", "fail"), ("t2", "fail"), ("t3", "pass")],
            failures,
            {"t1": "Add two numbers."},
            FILES,
            np.random.default_rng(0),
        ).files
    )
    assert sorted(material) == [
        "README.md",
        "SUMMARY.md",
        "conversations.jsonl",
        "failures/01-t1.md",
        "failures/02-t2.md",
    ]
    assert "agent/__main__.py, agent/loop.py" in material["README.md"]
    assert "- t3: pass" in material["SUMMARY.md"] and "Failures by kind (2 of 3)" in material["SUMMARY.md"]
    assert "empty_diff (changed no file): 1" in material["SUMMARY.md"]
    first = material["failures/01-t1.md"]
    assert "Add two numbers." in first and "[assistant] tried t1" in first and "agent: limits (t1)" in first
    assert "(unknown)" in material["failures/02-t2.md"]  # no statement known: said, not invented


def test_the_material_holds_no_grader_output(tmp_path):
    (tmp_path / "transcript.jsonl").write_text(json.dumps({"role": "assistant", "content": "my try"}) + "\n")
    (tmp_path / "grade.log").write_text("HIDDEN TEST assert secret() == 42")
    (tmp_path / "diff.patch").write_text("")
    seen = read_failure(Evaluation("n1", "t1", 1, "fail", log_path=str(tmp_path)))
    material = failure_material(
        [("t1", "fail")], [seen], {"t1": "statement"}, FILES, np.random.default_rng(0)
    )
    text = "".join(body for _, body in material.files)
    assert "my try" in text and "HIDDEN" not in text and "secret" not in text


def test_many_failures_are_a_seeded_draw_of_at_most_the_cap():
    failures = [failure(f"t{i:02d}") for i in range(3 * MAX_FAILURES)]
    outcomes = [(f.task, "fail") for f in failures]

    def shown(seed):
        material = failure_material(outcomes, failures, {}, FILES, np.random.default_rng(seed))
        return [name for name, _ in material.files if name.startswith("failures/")]

    assert len(shown(0)) == MAX_FAILURES and shown(0) == shown(0)
    assert len({tuple(shown(seed)) for seed in range(5)}) > 1  # repeated expansions see different failures
    assert (
        len(failure_material(outcomes, failures, {}, FILES, np.random.default_rng(0)).files)
        == MAX_FAILURES + 3
    )


def test_extra_files_such_as_a_pooled_experience_are_listed_and_bounded():
    material = dict(
        failure_material(
            [], [], {}, FILES, np.random.default_rng(0), extra={"experience.md": "x" * (3 * MAX_FILE_CHARS)}
        ).files
    )
    assert "- experience.md" in material["README.md"]
    assert len(material["experience.md"]) < MAX_FILE_CHARS + 100 and "cut at" in material["experience.md"]
    with pytest.raises(ValueError, match="relative and inside"):
        failure_material([], [], {}, FILES, np.random.default_rng(0), extra={"../escape.md": "x"})


def test_instructions_are_cleaned_and_capped_and_never_empty():
    assert (
        clean_instructions(b"  Fix the loop.\x1b[2J\x00\n\tthen test.\n") == "Fix the loop.[2J\n\tthen test."
    )
    long = clean_instructions(("y" * (10 * MAX_INSTRUCTIONS)).encode())
    assert len(long) < MAX_INSTRUCTIONS + 100 and long.startswith("y" * 100)
    assert clean_instructions(b"\xff\xfeok") == "\ufffd\ufffdok"
    for empty in (b"", b" \n\t ", b"\x00\x07"):
        with pytest.raises(DiagnosisFailed, match="empty instructions"):
            clean_instructions(empty)
