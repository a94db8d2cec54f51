"""An agent for expansion tests, and the place its expansions run in: a run with it as the only node, the
real gateway serving scripted models, process sandboxes (tests/unit/engine/test_expand.py,
tests/unit/meta/test_candidates.py)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from evolve.archive.records import Node
from evolve.archive.store import Run
from evolve.engine.worker import Here
from evolve.llm.gateway import Gateway
from evolve.llm.types import Role
from evolve.sandbox.factory import ProcessSandboxes
from evolve.sandbox.types import SandboxLimits
from evolve.tasks.types import write_files

AGENT = """import json, os, pathlib, subprocess, sys


def ask(text):
    request = json.dumps({"messages": [{"role": "user", "content": text}]})
    answer = subprocess.run(["curl", "-sS", "--unix-socket", os.environ["EVOLVE_LLM_SOCKET"], "-H",
                             "Content-Type: application/json", "-d", request, "http://gateway/v1/chat/completions"],
                            capture_output=True, text=True, check=True).stdout
    return json.loads(answer)["choices"][0]["message"]["content"]


def main(args):
    value = lambda flag: args[args.index(flag) + 1]
    if args[0] == "diagnose":
        material = pathlib.Path(value("--material"))
        shown = "\\n".join(p.read_text() for p in sorted(material.rglob("*.md")))
        env = {**os.environ, "OUT": value("--out"), "MATERIAL": str(material)}
        return subprocess.run(["bash", "-c", ask(shown)], env=env).returncode
    given = value("--problem" if args[0] == "solve" else "--instructions")
    env = {**os.environ, "INSTRUCTIONS": given}  # beside it, improve may find instructions.json
    return subprocess.run(["bash", "-c", ask(open(given).read())], cwd=value("--workdir"), env=env).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
"""
"""Its diagnose runs the reply to the material as bash (with $OUT); solve and improve run the reply to the
problem or instructions in the work directory."""
AGENT_TEST = "def test_the_agent_is_here():\n    import agent.__main__  # noqa: F401\n"


@contextmanager
def expansion_place(
    tmp: Path, models: Mapping[Role, object], agent: str = AGENT
) -> Iterator[tuple[Run, Node, Here]]:
    """(run, its one node: `agent` with its test, a place to run jobs on it)."""
    run = Run.create(tmp / "run")
    files = {"agent/__init__.py": "", "agent/__main__.py": agent, "tests/test_agent.py": AGENT_TEST}
    run.add_node(write_files({path: text.encode() for path, text in files.items()}, tmp / "agent"))
    with Gateway(dict(models), exchanges_dir=run.path / "exchanges") as gateway:
        yield run, run.nodes()[0], Here(run, ProcessSandboxes(SandboxLimits(wall_clock_s=120.0)), gateway)
