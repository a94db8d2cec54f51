"""A replayed pair for execution spectra: a tiny agent (not the seed) recorded on a task it passes and one it
fails, through the real gateway, ready to be replayed under coverage on any sandbox maker.

The agent asks the (scripted) model for a command, runs it, and reports back; when the command fails it
says only that it failed, so the command's output (a traceback) never reaches the model. The lines of that
branch run only in the failing evaluation.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from evolve.archive.store import Run
from evolve.engine.context import JobContext, SandboxMaker
from evolve.engine.evaluate import EvalSettings, evaluate
from evolve.engine.spectra import Spectra, SpectraResult
from evolve.llm.gateway import Gateway
from evolve.sandbox.factory import ProcessSandboxes
from evolve.standins.models import ScriptedModel
from evolve.tasks.types import Task, write_files

AGENT = """import http.client
import json
import os
import socket
import subprocess
import sys


def ask(text):
    conn = http.client.HTTPConnection("localhost", timeout=60)
    conn.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    conn.sock.connect(os.environ["EVOLVE_LLM_SOCKET"])
    body = json.dumps({"messages": [{"role": "user", "content": text}]})
    conn.request("POST", "/v1/chat/completions", body, {"Content-Type": "application/json"})
    return json.loads(conn.getresponse().read())["choices"][0]["message"]["content"]


def main(args):
    workdir = args[args.index("--workdir") + 1]
    command = ask(open(args[args.index("--problem") + 1]).read())
    ran = subprocess.run(["bash", "-c", command], cwd=workdir, capture_output=True, text=True)
    if ran.returncode != 0:
        ask("the command failed")
        return 0
    ask("done: " + ran.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
"""


def _line_of(text: str) -> tuple[str, int]:
    """The agent's first line holding `text`."""
    return "agent/__main__.py", next(n for n, line in enumerate(AGENT.splitlines(), 1) if text in line)


FAILING_ONLY = _line_of('ask("the command failed")')
"""The first line only the failing evaluation runs."""
RUNS_COMMAND = _line_of("subprocess.run(")
"""The line that runs the model's command."""

QUIET = " 2>&1 | tail -n 5"
PIPED = AGENT.replace(
    'subprocess.run(["bash", "-c", command]', 'subprocess.run(["bash", "-c", command + QUIET]'
).replace("def ask(text):", f"QUIET = {QUIET!r}\n\n\ndef ask(text):")
"""The tiny agent with each command piped into `tail`: the failing command exits 0, the agent says done."""
PIPE_LITERAL = (
    "agent/__main__.py",
    next(n for n, line in enumerate(PIPED.splitlines(), 1) if "QUIET =" in line),
)

FIX = "sed -i 's/a - b/a + b/' calc.py"
BREAK = "python3 -c 'import calc; calc.subtract(1, 2)'"
"""A command that fails with a traceback (calc has no `subtract`)."""


def agent_code(dest: Path, agent: str = AGENT) -> Path:
    files = {"agent/__init__.py": "", "agent/__main__.py": agent}
    return write_files({path: text.encode() for path, text in files.items()}, dest)


def _task(name: str) -> Task:
    return Task(
        name,
        "spectra",
        "dev",
        f"Make add add ({name}).",
        {"calc.py": b"def add(a, b):\n    return a - b\n"},
        {"tests/test_calc.py": b"from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"},
        "",
        "python3 -m pytest -q -p no:cacheprovider tests",
        agent_timeout_s=120.0,
        test_timeout_s=60.0,
    )


SETTINGS = EvalSettings(budget_steps=3, infra_retries=0)
TASKS = {"passes": (_task("passes"), FIX), "fails": (_task("fails"), BREAK)}


def processes(run: Run) -> SandboxMaker:
    return ProcessSandboxes()


def recorded_pair(
    path: Path,
    sandboxes: Callable[[Run], SandboxMaker] = processes,
    agent: str = AGENT,
) -> tuple[Run, str, dict[str, Task]]:
    """A run whose one node (the tiny agent, or `agent`) was evaluated on both tasks (`sandboxes(run)`'s),
    its exchanges recorded."""
    run = Run.create(path / "run")
    node = run.add_node(agent_code(path / "agent", agent)).id
    for task, command in TASKS.values():
        with Gateway(
            {"solve": ScriptedModel([command, "ok"])}, exchanges_dir=run.path / "exchanges"
        ) as gateway:
            evaluate(run, node, task, sandboxes=sandboxes(run), gateway=gateway, settings=SETTINGS)
    return run, node, {task.id: task for task, _ in TASKS.values()}


def own_tests_ran(
    tmp_path: Path, calc: str, tests: str, *, screen: int = 0, conftest: str = ""
) -> SpectraResult:
    """The Spectra work's own-test result for an agent of one module `agent/calc.py` and one test file
    (`conftest`: the tests' conftest.py, if any), with `screen` edits screened."""
    code = tmp_path / "code"
    (code / "agent").mkdir(parents=True)
    (code / "tests").mkdir()
    (code / "agent" / "__init__.py").write_text("")
    (code / "agent" / "calc.py").write_text(calc)
    (code / "tests" / "test_calc.py").write_text(tests)
    if conftest:
        (code / "tests" / "conftest.py").write_text(conftest)
    (tmp_path / "logs").mkdir()
    with Gateway(replay_from=tmp_path) as unused:  # no model: the tests ask none
        ctx = JobContext("spectra", "n", code, tmp_path / "logs", ProcessSandboxes(), unused)
        return Spectra((), SETTINGS, tests_image="evolve-base:latest", screen=screen)(ctx)


# For the screen (evolve.engine.screen): both tests run `return a - b` (b = 0 hides the fault from the
# first); only the failing one runs line 3.
CALC = """def add(a, b):
    if b:
        note = "nonzero"
    return a - b
"""
TESTS = (
    "from agent.calc import add\n\n\ndef test_zero():\n    assert add(5, 0) == 5\n\n\n"
    "def test_large():\n    assert add(11, 2) == 13\n"
)
