"""Generate and validate on an agent that is not the seed (tests/unit/engine/test_repair.py on process
sandboxes, tests/integration/evolution/test_repair.py on Docker): candidates at two ranked locations, scripted
models.

The agent, "relay", asks the model once and runs the reply as a bash script. Its defect: it shows the model
none of its task (`given[:0]`), so the model, which answers "Fix add" with the fix and anything else with
`true`, never fixes anything. The ranking puts an innocent line first (its retry count) and the defect's
second. The parent is evaluated first, through the real pipeline: it fails the task that needs a fix and
passes the one that needs none; those recordings feed the replay and the live re-run.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from evolve.archive.candidates import Candidate, read_candidates
from evolve.archive.store import Run
from evolve.engine.behaviour import failed_replays
from evolve.engine.context import SandboxMaker
from evolve.engine.evaluate import EvalSettings, evaluate
from evolve.engine.expand import ExpandSettings, Expansion
from evolve.engine.jobs import ExpansionResult
from evolve.engine.rerun import rerun_tasks
from evolve.engine.worker import Here
from evolve.llm.gateway import Gateway
from evolve.meta.locations import Location
from evolve.meta.modify import INSTRUCTIONS_JSON
from evolve.meta.templates import Generated
from evolve.standins.models import SMOKE_MARKER, RoutedModel
from evolve.tasks.types import Task, write_files

RELAY = """import http.client, json, os, socket, subprocess, sys

RETRIES = 3


class Gateway(http.client.HTTPConnection):
    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.connect(os.environ["EVOLVE_LLM_SOCKET"])


def ask(text):
    request = json.dumps({"messages": [{"role": "user", "content": text}]})
    for _ in range(RETRIES):
        gateway = Gateway("gateway")
        gateway.request("POST", "/v1/chat/completions", request, {"Content-Type": "application/json"})
        answer = gateway.getresponse()
        if answer.status < 500:
            break
    return json.loads(answer.read())["choices"][0]["message"]["content"]


def main(args):
    value = lambda flag: args[args.index(flag) + 1]
    given = open(value("--problem" if args[0] == "solve" else "--instructions")).read()
    shown = given[:0]
    script = ask("Task: " + shown)
    return subprocess.run(["bash", "-c", script], cwd=value("--workdir")).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
"""
RELAY_TEST = "def test_the_relay_imports():\n    import agent.__main__  # noqa: F401\n"
INNOCENT = Location(
    "agent/__main__.py", RELAY.splitlines().index("RETRIES = 3") + 1, 0.9, "runs on every task"
)
FAULTY = Location(
    "agent/__main__.py",
    RELAY.splitlines().index("    shown = given[:0]") + 1,
    0.6,
    "its text reaches no request",
)
MODELS = {
    "solve": RoutedModel(
        [
            ("Fix add", "sed -i 's/a - b/a + b/' calc.py"),
            (SMOKE_MARKER, "echo 'def greet(name): return f\"Hello, {name}!\"' > greet.py"),
        ],
        "true",
    ),
    "modify": RoutedModel([], "true"),  # the model's own candidate changes nothing
    "diagnose": RoutedModel([], "unused"),
}
SETTINGS = ExpandSettings(candidates=1, templates=4, locations=2, replays=1, rerun=1, rerun_passed=1)


def _task(name: str, statement: str, body: str) -> Task:
    return Task(
        name,
        "relay",
        "dev",
        statement,
        {"calc.py": f"def add(a, b):\n    return {body}\n".encode()},
        {"tests/test_calc.py": b"from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"},
        "",
        "python3 -m pytest -q -p no:cacheprovider tests",
        agent_timeout_s=600.0,
        test_timeout_s=60.0,
    )


TASKS = {
    "broken": _task("broken", "Fix add: it must add.", "a - b"),
    "sound": _task("sound", "Keep add.", "a + b"),
}


def expand_relay(
    tmp: Path,
    sandboxes_for: Callable[[Run], SandboxMaker],
    settings_of_expansion: ExpandSettings = SETTINGS,
    models: dict | None = None,
    screened: tuple[Generated, ...] = (),
    ran: frozenset[tuple[str, int]] | None = None,
) -> tuple[ExpansionResult, list[Candidate], Path]:
    """The relay evaluated on both tasks, then one expansion of it at the two ranked locations (sandboxes made
    by `sandboxes_for(run)`; the expansion's settings and models: SETTINGS and MODELS unless given; the
    screen's kept edits: `screened`; the lines the spectra traced its failed run running: `ran`, None for
    untraced): its result, its candidates' records and its log directory."""
    run = Run.create(tmp / "run")
    sandboxes = sandboxes_for(run)
    files = {"agent/__init__.py": "", "agent/__main__.py": RELAY, "tests/test_relay.py": RELAY_TEST}
    node = run.add_node(write_files({path: text.encode() for path, text in files.items()}, tmp / "agent"))
    with Gateway(dict(models or MODELS), exchanges_dir=run.path / "exchanges") as gateway:
        settings = EvalSettings(budget_steps=2, infra_retries=0)
        outcomes = {
            name: evaluate(run, node.id, task, sandboxes=sandboxes, gateway=gateway, settings=settings)
            for name, task in TASKS.items()
        }
        assert {n: r.outcome for n, r in outcomes.items()} == {"broken": "fail", "sound": "pass"}, outcomes
        job = run.start_job("expand", node.id)
        ranked = {"locations": [INNOCENT.to_json(), FAULTY.to_json()]}  # as the host's diagnosis records them
        (run.log_dir(job.id) / INSTRUCTIONS_JSON).write_text(json.dumps(ranked))
        rerun = rerun_tasks(
            run, node.id, TASKS, settings_of_expansion.rerun, settings_of_expansion.rerun_passed
        )
        assert [t.id for t in rerun.failed] == ["broken"] and [t.id for t in rerun.passed] == ["sound"]
        work = Expansion(
            "Show the model the task.",
            settings_of_expansion,
            tuple(replace(r, ran=ran) for r in failed_replays(run, node.id, TASKS, 1)),
            settings,
            rerun=rerun,
            seed=(0, job.id),
            screened=screened,
        )
        result, _ = Here(run, sandboxes, gateway).run_work(job, node, work)
    return result, read_candidates(run.log_dir(job.id)), run.log_dir(job.id)


def check_the_fix_at_the_second_location_is_the_child(
    result: ExpansionResult, records: list[Candidate], log_dir: Path
) -> None:
    """Every template at the innocent line acts as its parent (or breaks where it ran) on the replay; the
    child is a template at the faulty line that fixed the failed task live and kept the passed one, and it
    ended the sampling (the model's candidate was never made)."""
    shown = "\n".join(f"{r.number} {r.location} {r.template} {r.stage} {r.reason}" for r in records)
    assert result.valid, (result.reason, shown)
    innocent = [r for r in records if r.location == f"{INNOCENT.path}:{INNOCENT.line}"]
    faulty = [r for r in records if r.location == f"{FAULTY.path}:{FAULTY.line}"]
    assert len(innocent) == SETTINGS.templates and {r.stage for r in innocent} == {"behaviour"}, shown
    (child,) = [r for r in records if r.chosen]
    assert child is faulty[-1] and child.source == "template" and child.fixed == 1 and child.tokens > 0, shown
    # a survivor that fixed all: no model candidate
    assert all(r.source == "template" for r in records), shown
    assert all(r.stage in ("behaviour", "rerun", "own tests", "imports") for r in faulty[:-1]), shown
    code = (result.code_dir / "agent" / "__main__.py").read_text()
    assert "given[:0]" not in code and code.count("\n") == RELAY.count("\n")
    # the passed task, too
    assert (log_dir / f"candidate-{child.number}" / "rerun-2" / "outcome.json").is_file()
