"""`python -m agent solve|improve|diagnose`: arguments, exit codes, the transcript, and what each command
may change."""
import json

import pytest
from agent.__main__ import main
from agent.model import ModelError

REPLACE = ("Fix it.\n```replace calc.py\n<<<<<<< SEARCH\n    return a - b\n=======\n    return a + b\n"
           ">>>>>>> REPLACE\n```")


def repo(tmp_path):
    (tmp_path / "repo").mkdir()
    (tmp_path / "repo/calc.py").write_text("def add(a, b):\n    return a - b\n")
    (tmp_path / "repo/test_calc.py").write_text("from calc import add\n\n\n"
                                                "def test_add():\n    assert add(2, 2) == 4\n")
    (tmp_path / "problem.md").write_text("Fix add in calc.py.")
    return ["solve", "--workdir", str(tmp_path / "repo"), "--problem", str(tmp_path / "problem.md")]


def records(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_solve_edits_the_repo_and_ends_with_an_exit_record(gateway, tmp_path, capsys):
    gateway.replies.append((200, REPLACE))
    transcript = tmp_path / "t.jsonl"
    assert main([*repo(tmp_path), "--budget-steps", "3", "--transcript", str(transcript)]) == 0
    assert "return a + b" in (tmp_path / "repo/calc.py").read_text()
    assert "Fix add in calc.py." in gateway.requests[0][1]["messages"][1]["content"]
    last = records(transcript)[-1]
    assert last["event"] == "exit" and last["status"] in ("submitted", "limits")
    assert capsys.readouterr().out.startswith("agent: ")


def test_solve_stops_at_the_step_budget(gateway, tmp_path):
    gateway.replies += [(200, "```bash\ntrue\n```")] * 5
    transcript = tmp_path / "t.jsonl"
    assert main([*repo(tmp_path), "--budget-steps", "2", "--transcript", str(transcript)]) == 0
    assert len(gateway.requests) == 2 and records(transcript)[-1]["status"] == "limits"


def test_a_failing_model_exits_1_and_no_gateway_exits_2(gateway, tmp_path, monkeypatch):
    gateway.replies += [(400, "")]
    assert main(repo(tmp_path)) == 1
    monkeypatch.delenv("EVOLVE_LLM_SOCKET")
    with pytest.raises(SystemExit) as exit_:
        main(["solve", "--workdir", str(tmp_path / "repo"), "--problem", str(tmp_path / "problem.md")])
    assert exit_.value.code == 2


def self_copy(tmp_path):
    (tmp_path / "self/agent").mkdir(parents=True)
    (tmp_path / "self/tests").mkdir()
    (tmp_path / "self/agent/__init__.py").write_text("X = 1\n")
    (tmp_path / "self/tests/test_x.py").write_text("from agent import X\n\n\n"
                                                   "def test_x():\n    assert X == 1\n")
    (tmp_path / "why.md").write_text("Add agent/notes.py.")
    return ["improve", "--workdir", str(tmp_path / "self"), "--instructions", str(tmp_path / "why.md")]


def test_improve_shows_the_agent_code_and_the_instructions_and_keeps_an_edit(gateway, tmp_path):
    gateway.replies += [(200, "```write agent/notes.py\nNOTE = 1\n```"), (200, "```done\n```")]
    assert main([*self_copy(tmp_path), "--budget-steps", "3"]) == 0
    assert (tmp_path / "self/agent/notes.py").read_text() == "NOTE = 1\n"
    prompt = gateway.requests[0][1]["messages"][1]["content"]
    assert "--- agent/__init__.py ---\nX = 1" in prompt and "Add agent/notes.py." in prompt


def test_improve_runs_the_agents_tests_after_an_edit_and_ends_when_they_pass(gateway, tmp_path):
    gateway.replies += [(200, "```write agent/__init__.py\nX = 2\n```"),
                        (200, "```write agent/__init__.py\nX = 1\n```"),
                        (200, "```write agent/__init__.py\nX = 3\n```")]
    assert main([*self_copy(tmp_path), "--budget-steps", "3"]) == 0
    assert len(gateway.requests) == 2 and (tmp_path / "self/agent/__init__.py").read_text() == "X = 1\n"
    assert "exit code 1" in gateway.requests[1][1]["messages"][-1]["content"]  # it saw its tests fail


def test_diagnose_reads_the_material_and_writes_the_models_instructions_to_out(gateway, tmp_path):
    (tmp_path / "material/failures").mkdir(parents=True)
    (tmp_path / "material/README.md").write_text("How the agent failed.")
    (tmp_path / "material/failures/01-calc.md").write_text("calc: the tests still fail")
    gateway.replies.append((200, "Make the agent run the tests before it finishes."))
    out = tmp_path / "instructions.md"
    assert main(["diagnose", "--material", str(tmp_path / "material"), "--out", str(out)]) == 0
    assert out.read_text() == "Make the agent run the tests before it finishes."
    prompt = gateway.requests[0][1]["messages"][-1]["content"]
    assert "--- README.md ---\nHow the agent failed." in prompt and "calc: the tests still fail" in prompt
    # none recorded here
    assert "Failure patterns, counted by the agent's own code over 0 evaluations" in prompt
    assert "  agent/loop.py:Agent.run  [lines " in prompt  # its own map
    gateway.replies.append((400, ""))
    with pytest.raises(ModelError):  # uncaught: `python -m agent diagnose` exits 1
        main(["diagnose", "--material", str(tmp_path / "material"), "--out", str(tmp_path / "other.md")])
    assert not (tmp_path / "other.md").exists()
