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
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"],
        cwd=SEED,
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
        check=False,
    )
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


AGENT_CHARS = 36_000
"""At most this many characters of agent/*.py but evidence.py (what `improve` shows of the agent without a
target): the model pays for characters, not lines (36,000 are about 8,800 tokens of Qwen2.5's tokenizer)."""


def test_the_agent_is_small_enough_to_read_whole():
    shown = [p for p in (SEED / "agent").glob("*.py") if p.name != "evidence.py"]
    chars = sum(len(p.read_text()) for p in shown)
    assert chars <= AGENT_CHARS, f"the seed agent has {chars} characters of Python; the model must read it"


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


def test_improve_shows_the_agent_code_that_fits_its_context_within_the_quickstart_job_budget(tmp_path):
    """Without a target, the first improve request holds the instructions and the agent's files that fit in
    its context (26,000 characters by default): the file the instructions name first, diagnose's own
    agent/evidence.py last, so not shown. The quickstart's job budget covers `improve_steps` requests of the
    agent's largest context under the gateway's reservation rule."""
    from evolve.config import load_config
    from evolve.llm.budget import prompt_token_bound
    from evolve.llm.types import ChatRequest, Message
    from evolve.seed import copy_seed

    code = copy_seed(tmp_path / "self")
    instructions = "Problem: p\n\nLikely cause: c\n\nChange to make: refuse done once in agent/loop.py\n"
    done = subprocess.run(
        [sys.executable, "-c", IMPROVE_PROMPT, str(code)],
        input=instructions,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
    )
    messages = json.loads(done.stdout.splitlines()[-1])
    prompt = "\n".join(m["content"] for m in messages)
    shown = [p for p in sorted((code / "agent").glob("*.py")) if f"--- agent/{p.name} ---\n" in prompt]
    assert code / "agent" / "loop.py" in shown and code / "agent" / "evidence.py" not in shown
    assert sum(len(p.read_text().rstrip()) for p in shown) <= 26_000 - len(instructions) - 1000
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
