"""`[meta] style = "dgm"`: DGM's branch choice, diagnosis input, schema, child prompt, and the
"compiled" check, on a real archive with a scripted diagnoser."""

from __future__ import annotations

import json
from collections import Counter

import numpy as np
import pytest

from evolve.archive import Run
from evolve.meta.dgm import (
    FIELDS,
    Diagnosis,
    Entry,
    TaskView,
    choose_entry,
    dgm_instructions,
    diagnose_dgm,
    messages,
    parse_diagnosis,
)
from evolve.meta.diagnose import DiagnosisFailed
from evolve.meta.problems import Failure
from evolve.meta.validate import dgm_compiled

ANSWER = {name: f"the {name}" for name in FIELDS}


def fail(task: str, empty: bool = False, output: str = "") -> Failure:
    return Failure(task, "fail", empty, "[assistant] tried", output)


def test_the_branches_follow_dgms_rules_with_the_seeded_generator():
    many_empty = [fail(f"e{i}", empty=True) for i in range(3)] + [fail("u1"), fail("u2")]
    picks = Counter(choose_entry(many_empty, 10, np.random.default_rng(seed)).branch for seed in range(400))
    assert set(picks) == {"solve_empty_patches", "solve_stochasticity", "task"}
    assert 60 < picks["solve_empty_patches"] < 140  # p = 1/4 when >= 10% of the tasks had empty patches
    few_empty = [fail("e0", empty=True)] + [fail(f"u{i}") for i in range(3)]
    assert all(
        choose_entry(few_empty, 20, np.random.default_rng(s)).branch != "solve_empty_patches"
        for s in range(100)
    )
    overflow = [fail("c", output="error: prompt is too long for the context window")]
    assert "solve_contextlength" in {
        choose_entry(overflow, 5, np.random.default_rng(s)).branch for s in range(100)
    }
    tasks = {choose_entry(many_empty, 10, np.random.default_rng(s)).task for s in range(400)} - {None}
    assert tasks == {"u1", "u2"}  # a random *unresolved* task, never an empty-patch one while some exist
    assert choose_entry(many_empty, 10, np.random.default_rng(3)) == choose_entry(
        many_empty, 10, np.random.default_rng(3)
    )


def test_a_task_diagnosis_sees_code_patches_log_task_and_patch_but_tests_only_behind_the_flag():
    view = TaskView(
        "[assistant] ran pytest", "Fix the parser.", "--- a/x.py\n+++ b/x.py", "FAILED test_secret"
    )
    request = messages(Entry("task", "t1"), "# agent/loop.py\nCODE\n# Patch 1\nLINEAGE", view)
    system, user = request[0]["content"], request[1]["content"]
    assert "CODE" in system and "LINEAGE" in system and "# Coding agent summary" in system
    for part in ("[assistant] ran pytest", "Fix the parser.", "+++ b/x.py", *(f'"{f}"' for f in FIELDS)):
        assert part in user
    assert "FAILED test_secret" in user
    hidden = messages(Entry("task", "t1"), "CODE", TaskView("log", "task", "patch"))[1]["content"]
    assert "Test results" not in hidden
    special = messages(Entry("solve_stochasticity"), "CODE", None)[1]["content"]
    assert "stochastic" in special and '"log_summarization"' not in special


def test_replies_parse_into_dgms_schema_and_build_dgms_child_prompt():
    fenced = "Thinking...\n```json\n" + json.dumps(ANSWER) + "\n```\ndone"
    diagnosis = parse_diagnosis(fenced, Entry("task", "t"))
    assert diagnosis == Diagnosis(**ANSWER)
    bare = {**ANSWER, "potential_improvements": ["a", "b"]}
    bare.pop("log_summarization")
    assert parse_diagnosis(json.dumps(bare), Entry("solve_empty_patches")).log_summarization == ""
    with pytest.raises(ValueError, match="log_summarization"):
        parse_diagnosis(json.dumps(bare), Entry("task", "t"))
    prompt = diagnosis.child_prompt()
    assert prompt.endswith("# To Implement\n\nthe implementation_suggestion\n\nthe problem_description")
    assert prompt.startswith("# Coding agent summary")


def test_an_unusable_diagnosis_is_asked_again_then_fails_with_no_fallback():
    replies = iter(["no json", '```json\n{"improvement_proposal": 1}\n```', "{", "still nothing"])
    with pytest.raises(DiagnosisFailed, match="after 4 replies"):
        diagnose_dgm(lambda request: next(replies), [], Entry("task", "t"))
    replies = iter(["no json", json.dumps(ANSWER)])
    assert diagnose_dgm(lambda request: next(replies), [], Entry("task", "t")).problem_description


def test_dgm_instructions_on_a_real_archive_record_the_branch_and_the_schema(tmp_path):
    run = Run.create(tmp_path / "run")
    code = tmp_path / "code"
    (code / "agent").mkdir(parents=True)
    (code / "agent" / "loop.py").write_text("def loop():\n    return 1\n")
    root = run.add_node(code)
    (code / "agent" / "loop.py").write_text("def loop():\n    return 2  # the child's change\n")
    node = run.add_node(code, parent=root.id, origin="expand")
    task_log = tmp_path / "eval-t1"
    task_log.mkdir()
    (task_log / "transcript.jsonl").write_text(
        json.dumps({"role": "assistant", "content": "I ran ls"}) + "\n"
    )
    (task_log / "diff.patch").write_text("--- a/p.py\n+++ b/p.py\n@@\n-x\n+y\n")
    (task_log / "grade.log").write_text("HIDDEN assert secret() == 42")
    run.record_evaluation(node.id, "t1", "fail", log_path=str(task_log))
    run.record_evaluation(node.id, "t2", "pass")
    asked: list[list[dict]] = []

    def complete(request: list[dict]) -> str:
        asked.append(request)
        return "```json\n" + json.dumps(ANSWER) + "\n```"

    log_dir = tmp_path / "job"
    log_dir.mkdir()
    seed = next(
        s for s in range(50) if choose_entry([fail("t1")], 2, np.random.default_rng(s)).branch == "task"
    )
    text = dgm_instructions(
        run,
        node,
        {"t1": "Make p.py print y."},
        code,
        complete,
        rng=np.random.default_rng(seed),
        show_test_results=False,
        log_dir=log_dir,
    )
    assert text.endswith("the problem_description")
    recorded = json.loads((log_dir / "diagnosis.json").read_text())
    assert recorded["entry"] == {"branch": "task", "task": "t1"} and set(FIELDS) <= set(recorded)
    system, user = asked[0][0]["content"], asked[0][1]["content"]
    assert "return 2  # the child's change" in system and "+    return 2" in system  # code and lineage patch
    assert "I ran ls" in user and "Make p.py print y." in user and "+y" in user
    assert "HIDDEN" not in system + user


def test_dgms_compiled_check():
    assert dgm_compiled({"a": ("fail", False), "b": ("pass", False)}, 2).valid
    assert not dgm_compiled({"a": ("fail", True), "b": ("fail", True)}, 2).valid
    assert "1 of 2" in dgm_compiled({"a": ("pass", False), "b": ("infra", False)}, 2).reason
