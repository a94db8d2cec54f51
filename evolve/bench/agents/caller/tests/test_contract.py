"""The agent contract: the commands, their exit codes, the transcript, the work tree's bounds. What the
model is offered, what each tool returns and what the prompts say are left to the search (and the
selfrepair bench's planted defects there must pass these tests: a defect the agent's own tests catch
measures nothing)."""
import json

from agent.__main__ import main
from agent.actions import perform


def call(name: str, **arguments: str) -> dict:
    """An assistant message holding one tool call."""
    return {"role": "assistant", "content": "", "tool_calls": [
        {"id": f"c-{name}", "type": "function",
         "function": {"name": name, "arguments": json.dumps(arguments)}}]}


def test_files_outside_the_work_tree_are_refused(tmp_path):
    assert perform(tmp_path, "write_file", json.dumps({"path": "../x.py", "content": ""})).startswith("error")
    assert perform(tmp_path, "nope", "{}") == "error: there is no function nope"
    assert perform(tmp_path, "bash", "{not json").startswith("error: the arguments are not valid JSON")


def test_solve_carries_out_a_call_and_ends_at_finish(tmp_path, pretend_gateway, monkeypatch):
    tree, statement, record = tmp_path / "repo", tmp_path / "task.md", tmp_path / "record.jsonl"
    tree.mkdir()
    statement.write_text("Make hello.py.")
    monkeypatch.setenv("EVOLVE_TRANSCRIPT", str(record))
    pretend_gateway.queue = [call("write_file", path="hello.py", content="print('hi')\n")]
    assert main(["solve", "--workdir", str(tree), "--problem", str(statement), "--budget-steps", "5"]) == 0
    assert (tree / "hello.py").read_text() == "print('hi')\n"
    assert len(pretend_gateway.seen) == 2
    roles = [json.loads(line)["role"] for line in record.read_text().splitlines()]
    assert roles == ["user", "assistant", "tool", "assistant"]


def test_improve_stops_at_its_turn_cap_and_exits_zero(tmp_path, pretend_gateway):
    (tmp_path / "instructions.md").write_text("Change nothing.")
    pretend_gateway.queue = [call("bash", command="true")] * 3
    assert main(["improve", "--workdir", str(tmp_path), "--instructions", str(tmp_path / "instructions.md"),
                 "--budget-steps", "1"]) == 0
    assert len(pretend_gateway.seen) == 1


def test_diagnose_writes_the_answer_and_fails_on_an_empty_one(tmp_path, pretend_gateway):
    (tmp_path / "material").mkdir()
    (tmp_path / "material" / "SUMMARY.md").write_text("greet: fail")
    pretend_gateway.queue = [{"role": "assistant", "content": "Show the test output."},
                             {"role": "assistant", "content": " "}]
    args = ["diagnose", "--material", str(tmp_path / "material"), "--out", str(tmp_path / "out.md")]
    assert main(args) == 0 and (tmp_path / "out.md").read_text() == "Show the test output."
    assert "greet: fail" in pretend_gateway.seen[0]["messages"][0]["content"]
    assert main(args) == 1
