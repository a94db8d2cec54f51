"""The contract (the commands, their exit codes) and the tools; no strategy."""
import json

from agent import tools
from agent.__main__ import act, main


def test_the_editor_writes_and_replaces_inside_its_directory(tmp_path):
    assert tools.write(tmp_path, "a/b.py", "x = 1\n") == "wrote a/b.py"
    assert tools.replace(tmp_path, "a/b.py", "x = 1", "x = 2") == "replaced in a/b.py"
    assert (tmp_path / "a/b.py").read_text() == "x = 2\n"
    assert tools.replace(tmp_path, "a/b.py", "y", "z").startswith("error")
    assert act(tmp_path, "```write ../out.py\nx\n```").startswith("error")


def test_a_reply_runs_its_first_block(tmp_path):
    assert "hi\n\n(exit 0)" in act(tmp_path, "Let me look.\n```bash\necho hi\n```\n```done\n```")
    assert act(tmp_path, "```done\n```") is None
    assert act(tmp_path, "no block").startswith("No fenced block")
    edit = "```replace f.py\n<<<<<<< SEARCH\nold\n=======\nnew\n>>>>>>> REPLACE\n```"
    (tmp_path / "f.py").write_text("old\n")
    assert act(tmp_path, edit) == "replaced in f.py" and (tmp_path / "f.py").read_text() == "new\n"


def test_solve_edits_the_repository_and_writes_its_transcript(tmp_path, gateway, monkeypatch):
    repo, problem, transcript = tmp_path / "repo", tmp_path / "problem.md", tmp_path / "t.jsonl"
    repo.mkdir()
    problem.write_text("Write greet.py.")
    monkeypatch.setenv("EVOLVE_TRANSCRIPT", str(transcript))
    gateway.replies = ["```write greet.py\ndef greet():\n    return 1\n```"]
    assert main(["solve", "--workdir", str(repo), "--problem", str(problem), "--budget-steps", "3"]) == 0
    assert (repo / "greet.py").read_text() == "def greet():\n    return 1\n"
    assert len(gateway.requests) == 2 and "Write greet.py." in gateway.requests[0]["messages"][1]["content"]
    roles = [json.loads(line)["role"] for line in transcript.read_text().splitlines()]
    assert roles == ["system", "user", "assistant", "user", "assistant"]


def test_diagnose_writes_the_reply_as_instructions(tmp_path, gateway):
    (tmp_path / "material").mkdir()
    (tmp_path / "material" / "SUMMARY.md").write_text("greet: fail")
    gateway.replies = ["Fix the loop."]
    out = tmp_path / "out.md"
    assert main(["diagnose", "--material", str(tmp_path / "material"), "--out", str(out)]) == 0
    assert out.read_text() == "Fix the loop."
    assert "greet: fail" in gateway.requests[0]["messages"][0]["content"]
