import json

import pytest
from agent.improve import clean_lesson, improve, read_lessons, render_lessons_file
from agent.loop import Agent, AgentConfig, render_lessons
from agent.model import Reply, ScriptedModel
from agent.tools import Workspace

PROMPTS = 'SOLVE = """Task: {problem}"""\nNO_EDIT_YET = "Write the code."\n'


@pytest.fixture
def me(tmp_path):
    """A tiny agent repository: prompts, lessons, and a test that reads the prompts."""
    root = tmp_path / "self"
    (root / "agent").mkdir(parents=True)
    (root / "agent/__init__.py").write_text("")
    (root / "agent/prompts.py").write_text(PROMPTS)
    (root / "agent/lessons.py").write_text(render_lessons_file([]))
    (root / "tests").mkdir()
    (root / "tests/test_prompts.py").write_text(
        "import sys, os\nsys.path.insert(0, os.path.dirname(os.path.dirname(__file__)))\n"
        "from agent import prompts\n\ndef test_solve_has_the_problem():\n    assert '{problem}' in prompts.SOLVE\n")
    return root


def run(me, replies, steps=3):
    model = ScriptedModel([Reply(r) for r in replies])
    agent = Agent(model, Workspace(me, timeout=60), AgentConfig(max_steps=steps), transcript=me.parent / "t.jsonl")
    return agent, model, improve(agent, "Problem: the agent changed no file.\nChange to make: say so.")


def events(me):
    return [json.loads(line) for line in (me.parent / "t.jsonl").read_text().splitlines()]


def test_a_good_edit_is_kept_and_no_lesson_is_asked(me):
    edit = '```python agent/prompts.py\nSOLVE = """Task: {problem}\nChange a file before you say done."""\n```'
    _, model, status = run(me, [edit, "```done\n```"])
    assert status == "submitted"
    text = (me / "agent/prompts.py").read_text()
    assert "Change a file before you say done." in text and 'NO_EDIT_YET = "Write the code."' in text
    assert read_lessons((me / "agent/lessons.py").read_text()) == []
    assert len(model.seen) == 2
    first = model.seen[0][1].content
    assert "--- agent/prompts.py ---" in first and first.rstrip().endswith("```")  # the instructions come last


def test_an_echo_leaves_a_lesson_in_the_last_step(me):
    echo = "Problem: the agent changed no file."
    agent, model, _ = run(me, [echo, echo, "- Always edit a file before you reply done.\nThanks!"])
    assert read_lessons((me / "agent/lessons.py").read_text()) == ["Always edit a file before you reply done."]
    assert agent.steps == 3 and len(model.seen) == 3
    assert "one short sentence of advice" in model.seen[2][-1].content
    assert any(e.get("event") == "lesson" for e in events(me))


def test_an_edit_that_breaks_the_tests_is_reverted_then_a_lesson_is_learned(me):
    breaking = '```python agent/prompts.py\nSOLVE = """no placeholder"""\n```'
    run(me, [breaking, "```done\n```", "Keep the placeholders when you edit a prompt."])
    assert (me / "agent/prompts.py").read_text() == PROMPTS
    assert read_lessons((me / "agent/lessons.py").read_text()) == ["Keep the placeholders when you edit a prompt."]
    reverted = [e for e in events(me) if e.get("event") == "reverted"]
    assert reverted and reverted[0]["files"] == ["agent/prompts.py"]


def test_a_known_or_empty_lesson_changes_nothing(me):
    (me / "agent/lessons.py").write_text(render_lessons_file(["Run the tests first."]))
    before = (me / "agent/lessons.py").read_text()
    run(me, ["```python\nprint(\n```", "Run the tests first."], steps=2)
    assert (me / "agent/lessons.py").read_text() == before
    run(me, ["```"], steps=1)
    assert (me / "agent/lessons.py").read_text() == before


def test_lessons_are_capped_and_shown_to_the_solver(me):
    (me / "agent/lessons.py").write_text(render_lessons_file([f"Lesson number {i}." for i in range(8)]))
    run(me, ["Lesson number nine is new."], steps=1)
    learned = read_lessons((me / "agent/lessons.py").read_text())
    assert len(learned) == 8 and learned[0] == "Lesson number 1." and learned[-1] == "Lesson number nine is new."
    assert "- Lesson number nine is new." in render_lessons(learned)
    assert render_lessons([]) == ""


def test_clean_lesson():
    assert clean_lesson('```\n"1. Read the failing test output first."\n```') == "Read the failing test output first."
    assert clean_lesson("ok") is None
    assert clean_lesson("```python\nx = 1\n```") is None
    assert clean_lesson("word " * 100).endswith(" ...")
    assert read_lessons("LESSONS = [") == []
    assert clean_lesson("Run the tests before done. Also read the error. And more.") == "Run the tests before done."


def test_an_edit_made_with_a_shell_command_counts(me):
    edit = "```bash\necho '# a note' >> agent/prompts.py\n```"
    _, model, _ = run(me, [edit, "```done\n```", "```done\n```"])
    assert (me / "agent/prompts.py").read_text().endswith("# a note\n")
    assert read_lessons((me / "agent/lessons.py").read_text()) == []  # changed: no lesson asked
    assert len(model.seen) == 2
