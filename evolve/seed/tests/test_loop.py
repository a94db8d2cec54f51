import json

import pytest
from agent.loop import Agent, AgentConfig
from agent.model import Reply, ScriptedModel, ToolCall
from agent.tools import Workspace


@pytest.fixture
def repo(tmp_path):
    (tmp_path / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests/test_calc.py").write_text(
        "import sys, os\nsys.path.insert(0, os.path.dirname(os.path.dirname(__file__)))\n"
        "from calc import add\n\ndef test_add():\n    assert add(2, 3) == 5\n")
    return tmp_path


def make(repo, replies, **config):
    model = ScriptedModel([Reply(r) if isinstance(r, str) else r for r in replies])
    agent = Agent(model, Workspace(repo, timeout=60), AgentConfig(**config), transcript=repo.parent / "t.jsonl")
    return agent, model


def test_fix_with_a_python_block_stops_when_checks_pass(repo):
    agent, model = make(repo, ["Fix add.\n```python\ndef add(a, b):\n    return a + b\n```"])
    assert agent.run("add() in calc.py subtracts instead of adding.") == "submitted"
    assert "return a + b" in (repo / "calc.py").read_text()
    first_prompt = model.seen[0][1].content
    assert "--- calc.py ---" in first_prompt and "return a - b" in first_prompt  # relevant file shown up front
    assert "1 failed" in first_prompt  # the baseline check result is shown


def test_format_errors_are_explained_and_the_agent_goes_on(repo):
    fix = "```replace calc.py\n<<<<<<< SEARCH\nreturn a - b\n=======\nreturn a + b\n>>>>>>> REPLACE\n```"
    agent, model = make(repo, ["The bug is the minus sign.", fix])
    assert agent.run("Fix add in calc.py") == "submitted"
    assert "no fenced block" in model.seen[1][-1].content
    assert agent.steps == 2


def test_done_without_an_edit_is_refused_then_accepted(repo):
    agent, model = make(repo, ["```done\n```", "DONE", "done", "done"], done_refusals=2)
    assert agent.run("Fix add in calc.py") == "submitted"
    assert "not changed any file" in model.seen[1][-1].content
    assert "still fail" in model.seen[3][-1].content  # warned once that checks fail, then accepted
    assert agent.steps == 4


def test_step_cap(repo):
    agent, _ = make(repo, ["```bash\nls\n```"] * 5, max_steps=3)
    assert agent.run("Fix add in calc.py") == "limits"
    assert agent.steps == 3


def test_failed_edit_shows_check_output_then_retry(repo):
    agent, model = make(repo, ["```python calc.py\ndef add(a, b):\n    return a * b\n```",
                               "```python calc.py\ndef add(a, b):\n    return a + b\n```"])
    assert agent.run("Fix add in calc.py") == "submitted"
    assert "assert 6 == 5" in model.seen[1][-1].content or "failed" in model.seen[1][-1].content


def test_transcript_is_written_as_it_goes(repo):
    agent, _ = make(repo, ["```bash\necho hello-from-bash\n```"], max_steps=1)
    agent.run("Fix add in calc.py")
    records = [json.loads(line) for line in (repo.parent / "t.jsonl").read_text().splitlines()]
    assert any("hello-from-bash" in (r.get("content") or "") for r in records)
    assert records[-1]["event"] == "exit" and records[-1]["status"] == "limits"


def test_native_tool_calls_get_tool_messages(repo):
    call = ToolCall("c1", "replace", json.dumps({"path": "calc.py", "old": "a - b", "new": "a + b"}))
    agent, model = make(repo, [Reply("", (ToolCall("c0", "bash", '{"command": "cat calc.py"}'),)),
                               Reply("", (call,))], native_tools=True)
    assert agent.run("Fix add in calc.py") == "submitted"
    tool_message = model.seen[1][-1]
    assert tool_message.role == "tool" and tool_message.tool_call_id == "c0" and "a - b" in tool_message.content


def test_old_messages_are_trimmed(repo):
    agent, model = make(repo, [f"```bash\npython3 -c 'print(\"x\" * 2000)' # {i}\n```" for i in range(6)],
                        max_steps=6, keep_last=2, trimmed_chars=50)
    agent.run("Fix add in calc.py")
    last_prompt = model.seen[-1]
    assert len(last_prompt) == len(agent.messages) - 2
    assert all(len(m.content) <= 60 for m in last_prompt[2:-2])
    assert len(last_prompt[-1].content) > 1000


def test_a_repeated_reply_is_pointed_out_and_not_run_again(repo):
    agent, model = make(repo, ["```bash\necho hi >> log.txt\n```"] * 3, max_steps=3)
    agent.run("Fix add in calc.py")
    assert "same reply" in model.seen[2][-1].content
    assert (repo / "log.txt").read_text() == "hi\n"


def test_checks_passing_after_an_edit_invite_done(tmp_path):
    (tmp_path / "m.py").write_text("def f():\n    return 1\n")
    agent, model = make(tmp_path, ["```python m.py\ndef f():\n    return 2\n```", "```done\n```"])
    assert agent.run("f in m.py should return 2") == "submitted"
    assert "reply ```done" in model.seen[1][-1].content


def test_prompt_stays_within_the_context_budget(repo):
    replies = [f"```bash\npython3 -c 'print(\"y\" * 3000)' # {i}\n```" for i in range(8)]
    agent, model = make(repo, replies, max_steps=8, context_chars=5000)
    agent.run("Fix add in calc.py")
    for prompt in model.seen:
        assert sum(len(m.content) for m in prompt) <= 5000 + 200 or len(prompt) <= 4
    assert model.seen[-1][1].content.startswith("Task:")  # the task itself is never dropped
    assert model.seen[-1][-1].role == "user"


def test_implementing_the_last_stub_with_green_checks_submits(tmp_path):
    (tmp_path / "m.py").write_text("def double(x):\n    raise NotImplementedError\n")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests/test_other.py").write_text("def test_nothing():\n    pass\n")
    agent, _ = make(tmp_path, ["```python\ndef double(x):\n    return 2 * x\n```"])
    assert agent.run("Implement `double(x)` in m.py") == "submitted"
    assert agent.steps == 1


def test_a_bare_python_block_finds_its_file_even_when_not_shown(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg/shown.py").write_text("def helper():\n    raise NotImplementedError\n")
    (tmp_path / "pkg/hidden.py").write_text("class Cache:\n    def get(self):\n        return 1\n")
    agent, _ = make(tmp_path, ["```python\nclass Cache:\n    def get(self):\n        return 2\n```"], max_steps=1)
    agent.run("Implement `helper` in pkg/shown.py")
    assert "return 2" in (tmp_path / "pkg/hidden.py").read_text()


def test_check_output_drops_run_times():
    from agent.tools import steady

    assert steady("3 passed in 0.09s\n[exit code 0]") == "3 passed\n[exit code 0]"
    assert steady("1 failed, 2 passed in 42.85s (0:00:42)") == "1 failed, 2 passed"
    assert steady("nothing to strip in here") == "nothing to strip in here"


def test_a_model_that_keeps_repeating_itself_is_sampled_hotter_then_stopped(repo):
    class Echo:
        def __init__(self):
            self.temperature, self.seen, self.contexts = 0.2, [], []

        def query(self, messages, tools=None):
            self.seen.append(self.temperature)
            self.contexts.append([m.content for m in messages if m.role == "assistant"])
            return Reply("```bash\nls\n```")

    model = Echo()
    agent = Agent(model, Workspace(repo, timeout=60), AgentConfig(max_steps=10, max_repeats=2))
    assert agent.run("Fix add in calc.py") == "stuck"
    assert agent.steps == 4  # the first reply and three repeats of it
    assert model.seen == [0.2, 0.2, 0.8, 0.8] and model.temperature == 0.2
    # after a repeat the prompt ends with what the first reply got back, not with the copies
    assert model.contexts[2].count("```bash\nls\n```") == 1 == model.contexts[3].count("```bash\nls\n```")


def test_done_is_refused_while_the_stub_is_still_there(tmp_path):
    (tmp_path / "money.py").write_text("def cents(x):\n    raise NotImplementedError\n\n\ndef other(x):\n    return x\n")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests/test_other.py").write_text("def test_nothing():\n    pass\n")
    agent, model = make(tmp_path, ["```python money.py\ndef other(x):\n    return x + 0\n```", "```done\n```",
                                   "```python money.py\ndef cents(x):\n    return f'${x / 100:.2f}'\n```"])
    assert agent.run("Implement `cents(x)` in money.py") == "submitted"
    assert "still `raise NotImplementedError` in money.py: cents" in model.seen[1][-1].content  # not "reply done"
    assert "still `raise NotImplementedError`" in model.seen[2][-1].content  # done refused
    assert "return f'${x / 100:.2f}'" in (tmp_path / "money.py").read_text()
