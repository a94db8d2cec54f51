import json

import numpy as np
import pytest

from evolve.archive.records import Evaluation
from evolve.meta import DiagnosisFailed, Failure, choose_problem, diagnose, parse_instructions, read_failure
from evolve.meta.diagnose import RETRY_TEMPERATURE, prompt
from evolve.meta.problems import Problem


def failure(task, outcome="fail", empty=False, transcript="[assistant] tried", output=""):
    return Failure(task, outcome, empty, transcript, output)


def test_read_failure_uses_only_what_the_agent_saw(tmp_path):
    log = tmp_path / "job-1"
    log.mkdir()
    (log / "transcript.jsonl").write_text(
        json.dumps({"role": "system", "content": "SYSTEM PROMPT"})
        + "\n"
        + json.dumps({"role": "user", "content": "the task"})
        + "\nnot json\n"
        + json.dumps({"role": "assistant", "content": "```bash\npytest\n```"})
        + "\n"
    )
    (log / "agent.log").write_text("agent: limits after 20 steps")
    (log / "diff.patch").write_text("")
    (log / "grade.log").write_text("HIDDEN TEST SOURCE assert secret() == 42")
    seen = read_failure(Evaluation("3", "t1", 1, "fail", log_path=str(log)))
    assert seen.empty_diff and seen.signature == "empty_diff"
    assert "[user] the task" in seen.transcript_tail and "[assistant] ```bash" in seen.transcript_tail
    assert "SYSTEM PROMPT" not in seen.transcript_tail
    assert "HIDDEN" not in seen.transcript_tail + seen.agent_output
    assert read_failure(Evaluation("3", "t2", 1, "timeout")).signature == "timeout"


def test_systematic_problem_wins_when_it_dominates():
    failures = [failure(f"t{i}", empty=True) for i in range(4)] + [failure("t9")]
    statements = {f"t{i}": f"fix {i}" for i in range(4)}
    problem = choose_problem(failures, statements, np.random.default_rng(0))
    assert problem.kind == "empty_diff" and "4 of 5" in problem.summary
    assert problem.statement == statements[problem.task]
    # the example is drawn from the run's seeded generator: repeated expansions differ, a seed repeats
    examples = {choose_problem(failures, statements, np.random.default_rng(seed)).task for seed in range(20)}
    assert examples == {"t0", "t1", "t2", "t3"}
    assert choose_problem(failures, statements, np.random.default_rng(7)) == choose_problem(
        failures, statements, np.random.default_rng(7)
    )
    overflow = [failure(f"t{i}", output="error: exceeds maximum context length") for i in range(3)]
    assert choose_problem(overflow, {}, np.random.default_rng(0)).kind == "context"


def test_otherwise_a_random_failed_task_seeded():
    failures = [failure("a"), failure("b", outcome="error"), failure("c", empty=True)]
    picks = {choose_problem(failures, {}, np.random.default_rng(seed)).task for seed in range(20)}
    assert picks == {"a", "b", "c"}
    first = choose_problem(failures, {}, np.random.default_rng(5))
    assert first == choose_problem(failures, {}, np.random.default_rng(5)) and first.kind == "task"
    assert choose_problem([], {}, np.random.default_rng(0)).kind == "general"


def test_prompt_is_short_and_stable():
    messages = prompt(
        Problem("task", "The agent crashed.", "t1", "Add two numbers.", "[assistant] x", "boom"),
        ["agent/loop.py", "agent/prompts.py"],
    )
    assert [m["role"] for m in messages] == ["system", "user"]
    assert messages[1]["content"] == (
        "One failure in detail: The agent crashed.\n\n"
        "The task it was given:\nAdd two numbers.\n\nThe end of what the agent saw and did:\n[assistant] "
        "x\n\n"
        "The agent's own output:\nboom\n\nThe agent's files: agent/loop.py, agent/prompts.py\n\n"
        "Reply with the JSON object only."
    )


@pytest.mark.parametrize(
    "reply",
    [
        '```json\n{"problem": "p", "cause": "c", "change": "show the file", "files": ["agent/loop.py"]}\n```',
        'Sure! {"change": "show the file", "files": "agent/loop.py"} Hope it helps.',
    ],
)
def test_instructions_parse_from_fenced_or_bare_json(reply):
    parsed = parse_instructions(reply)
    assert parsed.change == "show the file" and parsed.files == ("agent/loop.py",)
    assert "Change to make: show the file" in parsed.render()


@pytest.mark.parametrize(
    "reply", ["no json here", '{"change": ""}', '{"change": "x", "files": [1]}', "{broken"]
)
def test_malformed_instructions_are_refused(reply):
    with pytest.raises(ValueError):
        parse_instructions(reply)


def test_diagnose_retries_with_feedback_then_fails():
    seen, temperatures = [], []
    replies = iter(["I think the agent is fine.", '{"change": "run tests before finishing"}'])

    def complete(messages, temperature=None):
        seen.append(messages)
        temperatures.append(temperature)
        return next(replies)

    problem = Problem("task", "The agent crashed.")
    assert diagnose(complete, problem, ["agent/loop.py"]).change == "run tests before finishing"
    assert "not usable: the reply holds no JSON object" in seen[1][-1]["content"]
    assert temperatures == [None, RETRY_TEMPERATURE]  # the retry is sampled hotter, not repeated
    with pytest.raises(DiagnosisFailed, match="no usable diagnosis after 3 replies"):
        diagnose(lambda messages, temperature=None: "nope", problem, ["agent/loop.py"])
