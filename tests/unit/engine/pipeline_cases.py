"""Jobs for the one job pipeline, run through any worker place (here, or on a Ray cluster) on process
sandboxes.

The same evaluation and expansion work (evolve.engine.evaluate.Evaluation, evolve.engine.expand.Expansion)
runs wherever the place puts it; `run_cases` returns what each job came to, and the tests of both
places compare it with `expected`: the same outcomes and the same timeouts.

The agent asks the (scripted) model once through the gateway and runs the reply as a bash script.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from evolve.archive.store import Run
from evolve.engine.context import agent_timeout
from evolve.engine.evaluate import EvalSettings, Evaluation
from evolve.engine.expand import ExpandSettings, Expansion
from evolve.engine.worker import Place
from evolve.meta.modify import NO_CHANGE
from evolve.sandbox.factory import ProcessSandboxes
from evolve.sandbox.types import SandboxLimits
from evolve.standins.models import SMOKE_MARKER, RoutedModel
from evolve.tasks.types import Task, write_files

AGENT = """import json, os, subprocess, sys


def main(args):
    given = args[args.index("--problem" if args[0] == "solve" else "--instructions") + 1]
    request = json.dumps({"messages": [{"role": "user", "content": open(given).read()}]})
    answer = subprocess.run(["curl", "-sS", "--unix-socket", os.environ["EVOLVE_LLM_SOCKET"], "-H",
                             "Content-Type: application/json", "-d", request, "http://gateway/v1/chat/completions"],
                            capture_output=True, text=True, check=True).stdout
    script = json.loads(answer)["choices"][0]["message"]["content"]
    return subprocess.run(["bash", "-c", script], cwd=args[args.index("--workdir") + 1]).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
"""
AGENT_TEST = "def test_the_agent_is_here():\n    import agent.__main__  # noqa: F401\n"

ROOMY = SandboxLimits(wall_clock_s=120.0)
TIGHT = SandboxLimits(wall_clock_s=10.0)
"""Sandboxes whose wall clock a slow agent outlasts: its run must end first (the one timeout rule)."""

MODELS = {
    "solve": RoutedModel(
        [
            ("Fix add", "sed -i 's/a - b/a + b/' calc.py"),
            ("Be slow", "sleep 600"),
            (SMOKE_MARKER, "echo 'def greet(name): return f\"Hello, {name}!\"' > greet.py"),
        ],
        "true",
    ),
    "modify": RoutedModel(
        [("Add a note", "echo 'NOTE = 1  # a note' >> agent/__main__.py"), ("Think long", "sleep 600")],
        "true",
    ),
    "diagnose": RoutedModel([], "unused"),
}


def agent_code(dest: Path) -> Path:
    files = {"agent/__init__.py": "", "agent/__main__.py": AGENT, "tests/test_agent.py": AGENT_TEST}
    return write_files({path: text.encode() for path, text in files.items()}, dest)


def _task(name: str, statement: str) -> Task:
    return Task(
        name,
        "pipeline",
        "dev",
        statement,
        {"calc.py": b"def add(a, b):\n    return a - b\n"},
        {"tests/test_calc.py": b"from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"},
        "",
        "python3 -m pytest -q -p no:cacheprovider tests",
        agent_timeout_s=600.0,
        test_timeout_s=60.0,
    )


EVALUATIONS = {  # name: (task, sandbox limits)
    "solved": (_task("solved", "Fix add: it must add."), ROOMY),
    "unsolved": (_task("unsolved", "Leave it."), ROOMY),
    "slow": (_task("slow", "Be slow."), TIGHT),
}
EXPANSIONS = {  # name: (instructions, sandbox limits)
    "child": ("Add a note to the agent.", ROOMY),
    "slow-improve": ("Think long before you change anything.", TIGHT),
}


def expected() -> dict[str, tuple]:
    """What each job must come to, wherever it ran."""
    return {
        "solved": ("pass", None),
        "unsolved": ("fail", None),
        "slow": ("timeout", f"the agent ran past {agent_timeout(TIGHT.wall_clock_s):.0f} s"),
        "child": (True, None, False),
        # the improve step ends at the rule's timeout, before its sandbox: a child to judge, not "sandbox
        # failed"
        "slow-improve": (False, NO_CHANGE, True),
    }


def run_cases(run: Run, place_for: Callable[[ProcessSandboxes], Place]) -> tuple[dict[str, tuple], set[str]]:
    """Each case as a job of the seed node of `run`, at the place `place_for(sandboxes)` gives:
    what each came to, and where they ran."""
    node = run.nodes()[0]
    got: dict[str, tuple] = {}
    wheres: set[str] = set()
    for name, (task, limits) in EVALUATIONS.items():
        job = run.start_job("evaluate", node.id, task=task.id)
        result, where = place_for(ProcessSandboxes(limits)).run_work(
            job, node, Evaluation(task, EvalSettings())
        )
        wheres.add(where)
        assert Path(result.log_path, "agent.log").is_file() and Path(result.log_path, "diff.patch").is_file()
        got[name] = (result.outcome, result.detail if result.outcome == "timeout" else None)
    for name, (instructions, limits) in EXPANSIONS.items():
        job = run.start_job("expand", node.id)
        result, where = place_for(ProcessSandboxes(limits)).run_work(
            job, node, Expansion(instructions, ExpandSettings())
        )
        wheres.add(where)
        improve = (run.log_dir(job.id) / "improve.log").read_text().splitlines()[0]
        if result.valid:
            assert (result.code_dir / "agent" / "__main__.py").read_text().endswith("# a note\n")
        got[name] = (result.valid, result.reason, improve.endswith("timed out True"))
        got[f"{name} improve s"] = (float(improve.split(", ")[1].removesuffix(" s")),)
    return got, wheres


def check(got: dict[str, tuple]) -> None:
    """`got` is `expected()`, and the slow improve step ran for the rule's timeout, not its sandbox's
    clock."""
    timings = {name: got.pop(name) for name in list(got) if name.endswith(" improve s")}
    assert got == expected(), json.dumps(got, indent=1)
    (slow,) = timings["slow-improve improve s"]
    assert agent_timeout(TIGHT.wall_clock_s) - 0.5 <= slow < TIGHT.wall_clock_s
