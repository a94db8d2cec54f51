"""Shared pieces of the adversarial suite: an agent that runs whatever the (scripted) model tells it,
the real evaluation pipeline around it, and one grading sandbox for grader-level attacks."""

from __future__ import annotations

from pathlib import Path

import pytest

from evolve.archive.store import Run
from evolve.engine.evaluate import EvalSettings, evaluate
from evolve.llm.gateway import Gateway
from evolve.sandbox.factory import DockerSandboxes, grading_sandbox
from evolve.tasks import load_suite

TASK = "structs-lru-recency"
FIX = (
    "python3 - <<'PY'\nfrom pathlib import Path\np = Path('structs/lru.py')\n"
    "s = p.read_text().replace('            return default\\n        return self._data[key]',"
    " '            return default\\n        self._data.move_to_end(key)\\n        return self._data[key]')\n"
    "p.write_text(s)\nPY\n"
)
"""The honest solution of TASK, as a shell script the agent runs in the repo."""

EXECUTOR = '''"""An agent that asks the model once, through the gateway, and runs its reply as a bash \
script."""
import http.client
import json
import os
import socket
import subprocess
import sys


class UnixHTTP(http.client.HTTPConnection):
    def __init__(self, path):
        super().__init__("localhost", timeout=60)
        self.unix_path = path

    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.connect(self.unix_path)


def ask(text):
    conn = UnixHTTP(os.environ["EVOLVE_LLM_SOCKET"])
    conn.request("POST", "/v1/chat/completions", \
json.dumps({"messages": [{"role": "user", "content": text}]}),
                 {"Content-Type": "application/json"})
    reply = conn.getresponse()
    body = json.loads(reply.read())
    if reply.status != 200:
        print(f"agent: model_error (HTTP {reply.status}: {body['error']['message']})")
        sys.exit(1)
    return body["choices"][0]["message"]["content"]


def main(argv):
    command = argv[0]
    workdir = argv[argv.index("--workdir") + 1]
    task = argv[argv.index("--problem" if command == "solve" else "--instructions") + 1]
    script = ask(open(task).read())
    sys.exit(subprocess.run(["bash", "-c", script], cwd=workdir).returncode)


if __name__ == "__main__":
    main(sys.argv[1:])
'''


def executor_agent(dest: Path, *, tests: str = "def test_ok():\n    assert True\n") -> Path:
    """A minimal agent codebase meeting the contract (its reply is its program)."""
    (dest / "agent").mkdir(parents=True)
    (dest / "agent" / "__init__.py").write_text("")
    (dest / "agent" / "__main__.py").write_text(EXECUTOR)
    (dest / "tests").mkdir()
    (dest / "tests" / "test_agent.py").write_text(tests)
    return dest


@pytest.fixture(scope="session")
def task():
    return load_suite("builtin").get(TASK)


@pytest.fixture
def executor_node(tmp_path, base_image):
    run = Run.create(tmp_path / "run")
    node = run.add_node(executor_agent(tmp_path / "code"), origin="seed")
    yield run, node.id
    run.close()


@pytest.fixture
def attempt(executor_node, task):
    """attempt(model) -> EvalResult: the executor agent on TASK, its script from `model`, through the
    real gateway, a real agent sandbox and the real grader."""
    run, node_id = executor_node

    def go(model):
        with Gateway({"solve": model}, exchanges_dir=run.path / "exchanges", usage_sink=run) as gateway:
            return evaluate(
                run,
                node_id,
                task,
                sandboxes=DockerSandboxes(run.id),
                gateway=gateway,
                settings=EvalSettings(infra_retries=0),
            )

    return go


@pytest.fixture(scope="module")
def grader_box(base_image):
    """One grading sandbox (root grader, tests as uid 1000) shared by a module's grader-level attacks."""
    with grading_sandbox(base_image, "adversarial") as box:
        yield box
