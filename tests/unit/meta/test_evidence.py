from __future__ import annotations

import json
from pathlib import Path

import pytest

import evolve
from evolve.meta.evidence import (
    TaskRun,
    Turn,
    compute_evidence,
    conversations_jsonl,
    disorder,
    read_jsonl,
    recorded_run,
    turns_from_exchanges,
    turns_from_transcript,
)
from evolve.meta.profile import agent_profile

FIXTURES = Path(__file__).parent / "fixtures" / "humaneval-cpu"
SEED = agent_profile(Path(evolve.__file__).parent / "seed").markers
"""The bundled seed's markers (its profile.toml): how its checks, edits and exit status read."""


def seeded(*args, **fields) -> TaskRun:
    """An evaluation of the bundled seed, read with its markers."""
    return TaskRun(*args, markers=SEED, **fields)


def recorded_runs() -> list[TaskRun]:
    """The fixture's evaluations as the engine reads them (statement: the task's first paragraph)."""
    runs = []
    for line in (FIXTURES / "evaluations.jsonl").read_text().splitlines():
        evaluation = json.loads(line)
        exchanges = FIXTURES / "exchanges" / f"{Path(evaluation['log_path']).name}.jsonl"
        first = read_jsonl(exchanges.read_text())[0]["request"]["messages"][1]["content"]
        statement = first.removeprefix("Task:\n").split("\n\n")[0]
        runs.append(recorded_run(evaluation["task"], evaluation["outcome"], None, exchanges, statement, SEED))
    return runs


def by_label(runs: list[TaskRun]) -> dict[str, tuple[int, tuple[str, ...], str]]:
    return {p.label: (p.count, p.tasks, p.excerpt) for p in compute_evidence(runs).patterns}


def test_conversations_are_rebuilt_from_the_gateway_exchanges() -> None:
    turns = recorded_runs()[4].turns  # job 228, HumanEval-74
    assert len(turns) == 3 and turns[-1].output is None
    assert turns[0].reply.startswith("```bash\npython3 -m compileall -q . && python solution.py")
    assert turns[0].output == "bash: line 1: python: command not found\n\n[exit code 127]"


def test_recorded_failures_are_counted_with_tasks_and_excerpts() -> None:
    runs = recorded_runs()
    evidence = compute_evidence(runs)
    assert (evidence.evaluations, evidence.failed) == (6, 4)
    found = by_label(runs)
    count, tasks, excerpt = found['tool error "python: command not found"']
    assert (count, tasks) == (2, ("HumanEval-74",))  # the third reply got no output: the agent stopped
    assert "python solution.py" in excerpt and '"bash: line 1: python: command not found"' in excerpt
    assert found['tool error "replace: command not found"'][1] == ("HumanEval-84",)
    assert found["a reply repeated word for word"][1] == ("HumanEval-39", "HumanEval-74", "HumanEval-84")
    assert found["the agent changed no file"][1] == ("HumanEval-74", "HumanEval-84")
    assert found["an edit to a file the task does not name (path/to/file.py)"][1] == ("HumanEval-39",)
    assert set(found["a reply the agent could not act on"][1]) == {"HumanEval-10", "HumanEval-5"}
    assert found["the evaluation timed out"][1] == ("HumanEval-39",)
    assert found["a command timed out"][:2] == (2, ("HumanEval-39",))
    assert not any(label.startswith("an edit to a file") and "solution.py" in label for label in found)


def test_the_rendering_puts_the_widest_pattern_first_and_quotes_agent_text() -> None:
    text = compute_evidence(recorded_runs()).render()
    lines = text.splitlines()
    assert lines[0] == "Computed from 6 evaluations of the agent (4 failed):"
    assert lines[1].startswith("1. a reply repeated word for word: 3 times in 3 tasks (HumanEval-39, ")
    assert "2 times in 1 task (HumanEval-74)" in text
    # an excerpt is one quoted line: agent-written newlines cannot start a line of their own
    assert all(
        line.startswith(("Computed", "   e.g. ", "   usual fix: ")) or line[0].isdigit() for line in lines
    )
    assert "   usual fix: tell the model when it repeats a reply" in text


def test_transcripts_give_the_exit_status_steps_and_broken_checks() -> None:
    records = [
        {"role": "system", "content": "S"},
        {"role": "user", "content": "task"},
        {"role": "assistant", "content": "```write a.py\nx = (\n```"},
        {
            "role": "user",
            "content": (
                "Wrote a.py (1 lines).\nChecks: `python3 -m pytest` ->\nE   SyntaxError: '(' was "
                "never closed\n[exit code 2]"
            ),
        },
        {"role": "assistant", "content": "```bash\nls\n```"},
        {"role": "user", "content": "a.py\n[exit code 0]"},
        {"event": "exit", "status": "limits", "steps": 2, "edits": 1},
    ]
    turns, status = turns_from_transcript(records)
    assert status == "limits" and [t.reply[:8] for t in turns] == ["```write", "```bash\n"]
    found = by_label(
        [seeded("t1", "fail", turns, diff="+++ b/a.py\n+x = (\n", statement="Fix `a.py`.", status=status)]
    )
    assert found["the agent ran out of steps"][0] == 1
    assert found["an edit broke the checks"][0] == 1 and "SyntaxError" in found["an edit broke the checks"][2]
    assert "the agent changed no file" not in found
    assert not any(label.startswith("an edit to a file") for label in found)


def test_a_passing_check_that_fails_after_an_edit_broke_the_checks() -> None:
    passing, failing = (
        "Checks: `make test` ->\nok\n[exit code 0]",
        "Checks: `make test` ->\nFAILED\n[exit code 1]",
    )
    turns = (
        Turn("```replace a.py\n...```", f"Replaced 1 occurrence in a.py.\n{passing}"),
        Turn("```replace a.py\n...```", f"Replaced 1 occurrence in a.py.\n{failing}"),
        Turn("```done\n```"),
    )
    found = by_label([seeded("t1", "fail", turns, diff="+++ b/a.py\n", statement="edit a.py")])
    assert found["an edit broke the checks"][0] == 1


def test_replies_the_agent_answered_with_one_fixed_text_are_replies_it_did_not_act_on() -> None:
    """Any agent's fixed answer to different replies (its own words, not the result of an action), whatever
    its wording; a native tool call is an action, like a fenced block."""
    refusal = "Sorry, I could not use that."
    turns = (
        Turn("```python\ndef f():\n    return 1\n```", refusal),
        Turn("```python\ndef f():\n    return 2\n```", refusal),
        Turn("```bash\nls\n```", "a.py"),
    )
    found = by_label([seeded("t1", "fail", turns, statement="fix f")])
    assert found["a ```python block the agent could not act on"][0] == 2  # the form it sent, named
    assert "a ```bash block the agent could not act on" not in found
    called = (Turn("", "a.py", tool_calls=1), Turn("", "b.py", tool_calls=1))
    assert not any("could not act on" in label for label in by_label([seeded("t2", "fail", called)]))


@pytest.mark.parametrize(
    ("agent_output", "diff", "label"),
    [
        ("agent: limits after 20 steps, 0 edits", "", "the agent ran out of steps"),
        ("agent: model_error after 1 steps, 0 edits (HTTP 429)", "", "the model call failed"),
        ("", "", "the agent changed no file"),
    ],
)
def test_the_agent_output_and_diff_name_what_the_transcript_cannot(
    agent_output: str, diff: str, label: str
) -> None:
    assert label in by_label(
        [seeded("t1", "fail", (Turn("```done\n```"),), diff=diff, agent_output=agent_output)]
    )


def test_a_log_directory_with_a_transcript_and_no_exchanges(tmp_path: Path) -> None:
    (tmp_path / "transcript.jsonl").write_text(
        "not json\n"
        + json.dumps({"role": "assistant", "content": "hi"})
        + "\n"
        + json.dumps({"event": "exit", "status": "submitted"})
        + "\n"
    )
    (tmp_path / "diff.patch").write_text("")
    run = recorded_run("t1", "fail", tmp_path, tmp_path / "missing.jsonl")
    assert run.turns == (Turn("hi"),) and run.status == "submitted" and run.diff == ""
    assert set(by_label([run])) == {"the agent changed no file", "a reply the agent could not act on"}


def test_no_evaluations_no_patterns() -> None:
    assert (
        compute_evidence([]).render()
        == "Computed from 0 evaluations of the agent (0 failed):\n- no failure pattern found."
    )
    assert turns_from_exchanges([{"no": "response"}]) == ()


def test_a_huge_record_is_read_from_its_end(tmp_path: Path, monkeypatch) -> None:
    from evolve.meta import evidence

    monkeypatch.setattr(evidence, "MAX_RECORD_BYTES", 200)
    lines = [json.dumps({"role": "assistant", "content": f"reply {i}"}) for i in range(40)]
    (tmp_path / "transcript.jsonl").write_text("\n".join(lines) + "\n")
    run = recorded_run("t1", "fail", tmp_path, None)
    assert run.turns and run.turns[-1].reply == "reply 39" and all(t.reply != "reply 0" for t in run.turns)


def _exchange(messages: list[dict], reply: str, finish: str = "stop") -> dict:
    return {
        "request": {"messages": messages},
        "response": {"message": {"content": reply}, "finish_reason": finish},
    }


def test_what_the_agent_kept_from_the_model_cut_replies_and_cut_conversations() -> None:
    task = [{"role": "system", "content": "S"}, {"role": "user", "content": "Task: fix f"}]
    first = "```python solution.py\ndef f(x):\n    return ("
    records = [
        _exchange(task, first, "length"),
        # reply 1 left out
        _exchange([*task, {"role": "user", "content": "[exit code 1]"}], "```bash\nls\n```"),
    ]
    turns = turns_from_exchanges(records)
    assert [(t.cut, t.saw_previous) for t in turns] == [(True, True), (False, False)]
    found = by_label([seeded("t1", "fail", turns, prompt="Task: fix f")])
    assert found["a reply cut off at the token limit"][:2] == (1, ("t1",))
    assert found["a request that left out the agent's previous step"][:2] == (1, ("t1",))
    kept = turns_from_exchanges(
        [
            _exchange(task, "```bash\nls\n```"),
            _exchange(
                [
                    *task,
                    {"role": "assistant", "content": "```bash\nls\n```"},
                    {"role": "user", "content": "a.py\n[exit code 0]"},
                ],
                "done",
            ),
        ]
    )
    assert all(t.saw_previous and not t.cut for t in kept)


def test_a_request_out_of_the_chats_order_is_a_pattern_with_how_it_broke_it() -> None:
    system, task = {"role": "system", "content": "S"}, {"role": "user", "content": "Task: fix f"}
    first, second = (
        {"role": "assistant", "content": "```bash\nls\n```"},
        {"role": "assistant", "content": "```bash\ncat a.py\n```"},
    )
    ran = {"role": "user", "content": "a.py\n[exit code 0]"}
    assert disorder([system, task, first, ran, second]) == ""  # in order, whoever sent what
    assert disorder([task, first, ran, second]) == ""  # no system message is no disorder
    assert disorder([system, task, first, second]) == "the model's replies twice in a row"
    assert disorder([ran, first, task, system]) == "the system message comes after 3 others"
    assert disorder([task, system]) == "the system message comes after 1 other"
    turns = turns_from_exchanges(
        [_exchange([system, task], first["content"]), _exchange([system, task, first], second["content"])]
    )
    assert [t.disorder for t in turns] == ["", ""]  # the second ends with the first reply: no pair yet
    turns = turns_from_exchanges(
        [
            _exchange([system, task], first["content"]),
            _exchange([system, task, first], second["content"]),
            _exchange([system, task, first, second], "done"),
        ]
    )
    assert turns[2].disorder == "the model's replies twice in a row"
    found = by_label([seeded("t1", "fail", turns, prompt="Task: fix f")])
    assert found["a request whose messages break the chat's order"] == (
        1,
        ("t1",),
        "step 3: the model's replies twice in a row",
    )


@pytest.mark.parametrize(
    ("output", "silent"),
    [
        ("Wrote solution.py.\nChecks: `python3 -m doctest solution.py` ->\n[exit code 1]", True),
        ("[exit code 2]", True),
        (
            (
                'Checks: `python3 -m doctest solution.py` ->\n  File "solution.py", line 3\nSyntaxError: '
                "x\n[exit code 1]"
            ),
            False,
        ),
        ("Checks: `python3 -m doctest solution.py` ->\n[exit code 0]", False),
    ],
)
def test_a_failing_command_shown_with_nothing_but_its_exit_code_is_a_silent_failure(output, silent) -> None:
    found = by_label([seeded("t1", "fail", (Turn("```bash\npython3 solution.py\n```", output),))])
    assert ("a failing command shown with no output but its exit code" in found) == silent


DIFF = (
    "diff --git a/solution.py b/solution.py\n--- a/solution.py\n+++ b/solution.py\n@@ -1,3 +1,3 @@\n"
    ' def below_zero(operations: list) -> bool:\n     """True when the balance falls below zero."""\n'
    "-    raise NotImplementedError\n+    return False\n"
    "diff --git a/notes.py b/notes.py\nnew file mode 100644\n--- /dev/null\n+++ b/notes.py\n@@ -0,0 +1 "
    "@@\n+x = 1\n"
)


def test_an_edit_to_a_file_the_model_never_saw_and_a_run_without_checks() -> None:
    blind = seeded(
        "t1",
        "fail",
        (Turn("```python solution.py\n...```", "Wrote solution.py."),),
        diff=DIFF,
        prompt="Task: complete below_zero in solution.py\n\nFiles in the repository:\nsolution.py",
    )
    found = by_label([blind])
    assert found["an edit to a file whose content the model was never shown"] == (1, ("t1",), '"solution.py"')
    assert "no check ran: the model never saw the tests' result" in found
    source = 'def below_zero(operations: list) -> bool:\n    """True when the balance falls below zero."""\n'
    shown = seeded(
        "t2",
        "fail",
        blind.turns,
        diff=DIFF,
        prompt=blind.prompt
        + "\n\n--- solution.py ---\n"
        + source
        + "    raise NotImplementedError\n\nChecks: `python3 -m doctest solution.py` ->\nx\n[exit code 1]",
    )
    traceback = seeded(
        "t4",
        "fail",
        blind.turns,
        diff=DIFF,
        prompt=blind.prompt + "\n\nChecks: ... ->\n"
        # one line of three
        "    raise NotImplementedError\nNotImplementedError\n[exit code 1]",
    )
    assert "an edit to a file whose content the model was never shown" in by_label([traceback])
    assert not {
        "an edit to a file whose content the model was never shown",
        "no check ran: the model never saw the tests' result",
    } & set(by_label([shown]))
    assert "no check ran: the model never saw the tests' result" in by_label(
        # a pass without checks was luck
        [seeded("t3", "pass", blind.turns, diff=DIFF, prompt=blind.prompt)]
    )


def test_the_diagnosis_is_shown_the_usual_fix_said_for_any_agent() -> None:
    from evolve.meta.diagnose import prompt
    from evolve.meta.problems import Problem

    checked = "Task\n\nChecks: `python3 -m doctest solution.py` ->\nFailed\n[exit code 1]"
    evidence = compute_evidence(
        [seeded("t1", "fail", (Turn("```python\ndef f(", None, cut=True),), prompt=checked)]
    )
    shown = prompt(Problem("t1", "wrong", "it failed"), ["agent/a.py"], evidence)[1]["content"]
    assert "usual fix: ask for replies long enough to hold a whole answer (a larger token limit)" in shown


def test_computed_instructions_say_the_cause_before_the_symptom(tmp_path: Path) -> None:
    from evolve.meta.agentmap import agent_map
    from evolve.meta.diagnose import diagnose
    from evolve.meta.locations import Location
    from evolve.meta.problems import Problem

    (tmp_path / "agent").mkdir()
    (tmp_path / "agent" / "a.py").write_text("def ask():\n    return {'max_tokens': 8}\n")
    checked = "Task\n\nChecks: `python3 -m doctest solution.py` ->\nFailed\n[exit code 1]"
    runs = [
        seeded(f"t{n}", "fail", (Turn("```python\ndef f(", None, cut=n < 2),), prompt=checked)
        for n in range(3)
    ]
    evidence = compute_evidence(runs)  # no edit in 3 tasks (a symptom), cut replies in 2 (the cause)
    assert evidence.patterns[0].kind == "no_edit"
    top = Location("agent/a.py", 2, 0.7, "every request set max_tokens = 8")
    found = diagnose(
        lambda messages, temperature=None: "",
        Problem("t0", "wrong", "it failed"),
        agent_map(tmp_path),
        evidence=evidence,
        evidence_first=True,
        locations=(top,),
        code=tmp_path,
    )
    assert found.target == "agent/a.py:ask" and found.kind == "reply_cut"
    assert "Overall, a reply cut off at the token limit: 2 times in 2 of 3 tasks." in found.problem


def test_the_conversations_for_the_agents_own_count_put_failures_first_and_keep_whole_lines() -> None:
    long_reply = "```bash\n" + "x" * 5000 + "\n```"
    runs = [
        seeded("passed", "pass", (Turn("```done\n```"),), diff="+x", status="submitted"),
        seeded(
            "failed",
            "fail",
            (Turn(long_reply, "[exit code 1]", cut=True),),
            diff=None,
            agent_output="agent: limits after 3 steps",
            prompt="Task: fix f",
        ),
    ]
    text = conversations_jsonl(runs, 100_000)
    first, second = (json.loads(line) for line in text.splitlines())
    assert (first["task"], first["status"], first["edited"], second["task"]) == (
        "failed",
        "limits",
        False,
        "passed",
    )
    (turn,) = first["turns"]
    assert turn["cut"] is True and turn["saw_previous"] is True and turn["output"] == "[exit code 1]"
    assert (
        len(turn["reply"]) < 1300 and turn["reply"].startswith("```bash") and turn["reply"].endswith("x\n```")
    )
    assert second["edited"] is True and second["turns"][0]["output"] is None
    # a line that does not fit is left out whole
    assert conversations_jsonl(runs, len(text) - 1).count("\n") == 1


def test_a_pattern_in_failed_tasks_ranks_above_one_as_common_in_passes() -> None:
    """The wide lineage's first four diagnoses: "a reply repeated word for word: 7 times in 7 of 11 tasks", 3
    of them passes (the model re-sent its passing function until the steps ran out)."""
    again = (
        Turn("```python\ndef f():\n    return 1\n```", "[exit code 0]"),
        Turn("```python\ndef f():\n    return 1\n```"),
    )
    timed_out = Turn("```bash\npython3 -m doctest solution.py\n```", "[timed out after 10 s]")
    runs = [
        *(seeded(f"pass-{n}", "pass", again, diff="+x") for n in range(3)),
        seeded("fail-0", "fail", (timed_out, *again), diff="+x"),
        seeded("fail-1", "fail", (timed_out,), diff="+x"),
    ]
    evidence = compute_evidence(runs)
    first, second = evidence.patterns[:2]
    assert (first.label, first.tasks, first.passed) == ("a command timed out", ("fail-0", "fail-1"), ())
    assert (second.label, len(second.tasks), second.passed) == (
        "a reply repeated word for word",
        4,
        ("pass-0", "pass-1", "pass-2"),
    )
    text = evidence.render()
    assert "1. a command timed out: 2 times in 2 tasks (fail-0, fail-1)" in text
    assert "2. a reply repeated word for word: 4 times in 4 tasks, 3 of them passed (pass-0, " in text
    mixed = compute_evidence([seeded("t", "pass", again, diff="+x"), seeded("t", "fail", again, diff="+x")])
    assert mixed.patterns[0].passed == ()  # a task that failed once with the pattern counts as a failure


def test_a_check_that_passed_a_failing_solution_is_the_cause_the_instructions_name() -> None:
    """The wide lineage's node 0: 6 of its 8 failed tasks ended with `python3 -m compileall -q .` passing
    (their docstrings give examples as `f(x) ==> y`, which doctest skips), and the model, with nothing
    new to go on, re-sent its function: the repeats are the symptom, the check that cannot tell the cause."""
    compiled = "Checks: `python3 -m compileall -q .` ->\n[exit code 0]"
    code = "```python\ndef f(n):\n    return n\n```"
    stuck = (
        Turn(code, f"Wrote solution.py (3 lines).\n{compiled}"),
        Turn(code, "That edit changed nothing in solution.py. Make the change."),
        Turn(code),
    )
    doctest = "Checks: `python3 -m doctest solution.py` ->\n"
    runs = [
        *(seeded(f"weak-{n}", "fail", stuck, diff="+x", prompt=f"Task: f\n\n{compiled}") for n in range(2)),
        seeded(
            "caught",
            "fail",
            (Turn(code, f"Wrote solution.py.\n{doctest}Failed example: f(1)\n[exit code 1]"),),
            diff="+x",
            prompt=f"Task: f\n\n{doctest}[exit code 1]",
        ),
        seeded("passed", "pass", stuck, diff="+x", prompt=f"Task: f\n\n{compiled}"),
    ]
    found = {p.kind: p for p in compute_evidence(runs).patterns}
    weak = found["weak_check"]
    assert weak.label == "its own check `python3 -m compileall -q .` passed, the task failed"
    assert (weak.tasks, weak.passed) == (("weak-0", "weak-1"), ())  # not the pass, not the failing doctest
    assert found["repeated_reply"].tasks == ("weak-0", "weak-1", "passed")


def test_the_same_result_of_different_actions_is_no_fixed_answer() -> None:
    """Two different edits that each leave the same failing check: acted on (the result carries numbers)."""
    result = "Wrote a.py (3 lines).\nChecks: `pytest` ->\nFAILED test_a.py::test_f\n[exit code 1]"
    turns = (Turn("```write a.py\nx = 1\n```", result), Turn("```write a.py\nx = 2\n```", result))
    assert not any(
        "could not act on" in label for label in by_label([seeded("t1", "fail", turns, diff="+x")])
    )
