"""The seed agent's own test suite (the one the validation gate runs) passes on the host."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import evolve.seed

SEED = Path(evolve.seed.__file__).parent


def test_seed_agent_tests_pass():
    env = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "PYTHONDONTWRITEBYTECODE": "1"}
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"], cwd=SEED,
                          capture_output=True, text=True, timeout=600, env=env, check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert " passed" in done.stdout


def test_seed_is_standard_library_only():
    allowed = set(sys.stdlib_module_names) | {"agent", "pytest", "tests"}
    for path in (SEED / "agent").rglob("*.py"):
        for line in path.read_text().splitlines():
            words = line.split()
            if line.startswith(("import ", "from ")) and len(words) > 1:
                assert words[1].split(".")[0] in allowed, f"{path.name}: {line}"


def test_copy_seed_leaves_out_the_engine_files(tmp_path):
    from evolve.seed import copy_seed

    dest = copy_seed(tmp_path / "agent-code")
    assert (dest / "agent" / "__main__.py").exists() and (dest / "requirements.txt").exists()
    assert (dest / "agent" / "__init__.py").exists() and not (dest / "__init__.py").exists()
    assert not list(dest.rglob("__pycache__"))


def test_the_agent_is_small_enough_to_read_whole():
    lines = sum(len(p.read_text().splitlines()) for p in (SEED / "agent").rglob("*.py"))
    assert lines <= 520, f"the seed agent has {lines} lines of Python; the model must be able to read it whole"


IMPROVE_PROMPT = """
import json, sys
sys.path.insert(0, sys.argv[1])
from pathlib import Path
from agent.loop import Agent
from agent.tools import Workspace
from agent.commands import improve

class Model:
    seen = []
    def query(self, messages, **options):
        self.seen.append(messages)
        return {"content": "```done\\n```"}

model = Model()
improve(Agent(model, Workspace(Path(sys.argv[1])), 1), sys.stdin.read())
print(json.dumps(model.seen[0]))
"""


def test_improve_shows_every_agent_file_within_the_quickstart_job_budget(tmp_path):
    """The first improve request holds all of agent/ that `solve` and `improve` run (not diagnose's
    agent/evidence.py, shown only when named) and the instructions; the quickstart's job budget
    covers `improve_steps` requests of the agent's largest context under the gateway's reservation rule."""
    from evolve.config import load_config
    from evolve.llm.budget import prompt_token_bound
    from evolve.llm.types import ChatRequest, Message
    from evolve.seed import copy_seed

    code = copy_seed(tmp_path / "self")
    instructions = "Problem: p\n\nLikely cause: c\n\nChange to make: refuse done once in agent/loop.py\n"
    done = subprocess.run([sys.executable, "-c", IMPROVE_PROMPT, str(code)], input=instructions, capture_output=True,
                          text=True, timeout=300, check=True, env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
    messages = json.loads(done.stdout.splitlines()[-1])
    prompt = "\n".join(m["content"] for m in messages)
    for path in (code / "agent").glob("*.py"):  # all but the meta procedure's own evidence code, which is
        assert (f"--- agent/{path.name} ---\n" in prompt) == (path.name != "evidence.py"), path.name  # shown last
    assert "refuse done once in agent/loop.py" in prompt
    largest = ChatRequest(messages=(Message(role="user", content="x" * 26_000),))
    config = load_config(Path(evolve.seed.__file__).parents[1] / "configs" / "quickstart.toml")
    per_step = prompt_token_bound(largest) + 2 * 8 + config.models.modify.max_tokens
    first = prompt_token_bound(ChatRequest(messages=tuple(Message(**m) for m in messages)))
    assert first <= prompt_token_bound(largest) + 64
    assert config.budget.improve_steps * per_step + 2_000 <= config.budget.job_tokens  # + the lesson request


def test_any_agent_directory_is_copied_without_version_control_and_caches(tmp_path):
    from evolve.seed import agent_problem, copy_agent

    source = tmp_path / "mine"
    (source / "agent" / "__pycache__").mkdir(parents=True)
    (source / ".git").mkdir()
    (source / "agent" / "__main__.py").write_text("print('hi')\n")
    (source / "agent" / "__pycache__" / "x.pyc").write_bytes(b"")
    (source / "agent" / "here.py").symlink_to("__main__.py")
    assert agent_problem(source) is None
    dest = copy_agent(source, tmp_path / "copy")
    assert (dest / "agent" / "__main__.py").read_text() == "print('hi')\n"
    assert (dest / "agent" / "here.py").is_symlink() and not (dest / ".git").exists()
    assert not list(dest.rglob("__pycache__"))


def test_a_directory_that_is_no_agent_is_refused_in_one_line(tmp_path):
    from evolve.seed import agent_problem

    assert "no such directory" in agent_problem(tmp_path / "missing")
    (tmp_path / "agent").mkdir()
    assert "no agent/__main__.py" in agent_problem(tmp_path)
    (tmp_path / "agent" / "__main__.py").write_text("")
    (tmp_path / "agent" / "key").symlink_to("/etc/passwd")  # copied, it would carry a host file in
    assert "symbolic link out of the tree" in agent_problem(tmp_path)
