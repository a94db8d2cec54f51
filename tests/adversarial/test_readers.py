"""An agent's own output can never stop a run: what it writes (its transcript; the files of its own tree) is
read on the host through the one total reader (evolve/untrusted.py), each attack next to an honest twin.

Through the real engine worker, runner, gateway, diagnosis in each meta style (`compact`, `dgm`, and the
agent's own procedure), expansion and gate, on process sandboxes (the sandbox backend plays no part in
what the host reads; one run repeats the runner's case in Docker). The agent asks the scripted model once and
runs its reply as bash; on the task the reply writes the transcript. Before the reader was total, each attack
raised out of the host's diagnosis (RecursionError, ValueError, AttributeError, UnicodeEncodeError,
IsADirectoryError): the runner filed each as a failed job, and after eight in a row stopped the run as
"infrastructure failures in a row".
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evolve.archive.store import Run
from evolve.archive.vocab import StopReason
from evolve.config import BudgetConfig, MetaConfig
from evolve.engine.executors import LocalExecutor
from evolve.engine.expand import ExpandSettings
from evolve.engine.runner import MAX_CONSECUTIVE_INFRA, Runner
from evolve.engine.worker import EngineWorker, WorkerSettings
from evolve.llm.gateway import Gateway
from evolve.meta.dgm import FIELDS
from evolve.meta.modify import NO_CHANGE
from evolve.sandbox.factory import DockerSandboxes
from evolve.sandbox.types import SandboxLimits
from evolve.search import Evaluate, Expand, Stop
from evolve.standins.models import SMOKE_MARKER, RoutedModel
from evolve.tasks.types import Task
from tests.integration.scripted import diagnosis
from tests.unit.engine.expansion_place import expansion_place

from .conftest import executor_agent

USER = 'b\'{"role": "user", "content": "Fix add."}\''
POISON = [  # Python expressions of the lines (the reply is a script, shorter than the lines it writes)
    USER,
    "b'[' * 200_000 + b']' * 200_000",  # RecursionError in json.loads
    "b'{\"role\": \"assistant\", \"content\": ' + b'9' * 5_000 + b'}'",  # ValueError: Python's digit limit
    'b\'{"role": "assistant", "content": {"not": "text"}}\'',  # AttributeError: no string
    'b\'{"role": "tool", "content": ["a", "list"]}\'',
    'b\'{"role": "assistant", "content": "a lone \\\\ud800"}\'',  # UnicodeEncodeError, written back
    'b\'{"role": ["assistant"], "content": NaN}\'',
    'b\'{"event": "exit", "status": {"a": 1}}\'',
    'b\'{"role": "assistant", "content": "caf\\xe9, not UTF-8"}\'',
]
"""The attack's transcript: each line breaks a reader that trusts what json.loads returns."""
HONEST = [
    USER,
    'b\'{"role": "assistant", "content": "I give up."}\'',
    'b\'{"event": "exit", "status": "submitted"}\'',
]


def writes(lines: list[str]) -> str:
    """A reply that writes `lines` (Python expressions of bytes) as the agent's transcript, leaving the
    task unsolved."""
    program = (
        f"import json, os\nlines = [{', '.join(lines)}]\n"
        "open(os.environ['EVOLVE_TRANSCRIPT'], 'wb').write(b'\\n'.join(lines))\n"
    )
    return f"python3 - <<'PY'\n{program}PY\n"


TEST = b"from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
TASK = Task(
    "add",
    "adversarial",
    "dev",
    "Fix add: it must add.",
    {"calc.py": b"def add(a, b):\n    return a - b\n"},
    {"tests/test_calc.py": TEST},
    "",
    "python3 -m pytest -q -p no:cacheprovider tests",
    agent_timeout_s=600.0,
    test_timeout_s=60.0,
)
NOTE = "echo 'NOTE = 1  # a note' >> agent/__main__.py"
DGM_REPLY = "```json\n" + json.dumps({name: "Add a note to the agent." for name in FIELDS}) + "\n```"
STYLES = {"compact": MetaConfig(), "dgm": MetaConfig(style="dgm"), "agent": MetaConfig(procedure="agent")}


def models(transcript: list[str], style: str, modify: str = NOTE) -> dict[str, RoutedModel]:
    diagnose = {
        "compact": diagnosis(("agent/__main__.py",)),
        "dgm": DGM_REPLY,
        "agent": 'echo "Add a note to the agent." > $OUT',
    }[style]
    return {
        "diagnose": RoutedModel([], diagnose),
        "modify": RoutedModel([], modify),
        "solve": RoutedModel(
            [
                ("Fix add", writes(transcript)),
                (SMOKE_MARKER, _SMOKE),
                ("check that `diagnose` runs", "echo 'Check the loop.' > $OUT"),
            ],
            "true",
        ),
    }


_SMOKE = "echo 'def greet(name): return f\"Hello, {name}!\"' > greet.py"


def worker(run, place, style: str) -> EngineWorker:
    settings = WorkerSettings(meta=STYLES[style], expand=ExpandSettings())
    return EngineWorker(
        run, {TASK.id: TASK}, gateway=place.channels, settings=settings, seed=0, sandboxes=place.sandboxes
    )


def evaluated_then_expanded(tmp: Path, transcript: list[str], style: str):
    """The seed evaluated on TASK (its agent writing `transcript`), then expanded once: (run, expansion
    result, the expansion's log directory)."""
    with expansion_place(tmp, models(transcript, style)) as (run, node, place):
        engine = worker(run, place, style)
        job = run.start_job("evaluate", node.id, task=TASK.id)
        graded = engine.evaluate(job, node, TASK.id, "dev")
        run.record_evaluation(node.id, TASK.id, graded.outcome, log_path=graded.log_path, job_id=job.id)
        assert graded.outcome == "fail", graded
        expansion = run.start_job("expand", node.id)
        return run, engine.expand(expansion, node), run.log_dir(expansion.id)


@pytest.mark.parametrize("style", STYLES)
def test_a_poisoned_transcript_is_skipped_and_the_expansion_goes_on_as_its_honest_twins(tmp_path, style):
    _, honest, honest_logs = evaluated_then_expanded(tmp_path / "honest", HONEST, style)
    _, attacked, logs = evaluated_then_expanded(tmp_path / "attack", POISON, style)
    assert honest.valid, honest.reason
    assert attacked.valid, attacked.reason
    assert not (honest_logs / "unread.md").exists()
    unread = (logs / "unread.md").read_text()  # what was skipped, and why, in the job's log
    assert unread.startswith(
        "- add: 3 lines skipped (line 2: nests more than 64 levels deep; line 3: "
        "an integer of 5000 digits is outside 64 bits; line 7: NaN is not a JSON "
        "number)"
    ), unread
    instructions = (logs / "instructions.md").read_text()  # written back: no lone surrogate reached it
    assert "Add a note" in instructions or "agent/__main__.py" in instructions
    if style != "dgm":  # the engine's count names what it could read of the transcript
        assert json.loads((logs / "evidence.json").read_text())["evaluations"] == 1


def test_a_file_of_the_tree_that_is_a_directory_is_read_as_empty(tmp_path):
    """The next form: the node's own tree holds `agent/tools.py`, a link to a directory (the gate keeps a
    link inside the tree). The host maps and quotes the agent's files in every meta style."""
    for style in STYLES:
        with expansion_place(tmp_path / style, models(HONEST, style)) as (run, node, place):
            code = run.checkout(node.id, tmp_path / f"{style}-code")
            (code / "agent" / "tools.py").symlink_to("../tests", target_is_directory=True)
            linked = run.add_node(code, parent=node.id, origin="self_modify", status="valid")
            engine = worker(run, place, style)
            job = run.start_job("evaluate", linked.id, task=TASK.id)
            graded = engine.evaluate(job, linked, TASK.id, "dev")
            run.record_evaluation(linked.id, TASK.id, graded.outcome, log_path=graded.log_path, job_id=job.id)
            result = engine.expand(run.start_job("expand", linked.id), linked)
            assert result.valid, (style, result.reason)


OTHER_SHAPES = {  # the next form: a transcript of another shape altogether, and what unread.md says of it
    "pretty-printed": (["json.dumps({'role': 'assistant', 'content': 'x'}, indent=2).encode()"], "not JSON"),
    "one array": (
        ["json.dumps([{'role': 'assistant', 'content': 'x'}] * 3).encode()"],
        "a JSON list, not an object",
    ),
    "binary": (["bytes(range(256)) * 1000"], "not JSON"),
    "a 20 MiB line": (["b'{\"content\": \"' + b'x' * (20 << 20) + b'\"}'"], "over the cap of 8388608"),
}


@pytest.mark.parametrize("shape", OTHER_SHAPES)
def test_a_transcript_of_another_shape_is_skipped_with_its_reason(tmp_path, shape):
    lines, reason = OTHER_SHAPES[shape]
    _, attacked, logs = evaluated_then_expanded(tmp_path, [USER, *lines], "compact")
    assert attacked.valid, attacked.reason
    assert reason in (logs / "unread.md").read_text()


class EvaluateThenExpand:
    """Evaluate the seed once, then expand it `expansions` times, one job at a time."""

    name = "evaluate-then-expand"

    def __init__(self, expansions: int) -> None:
        self.expansions = expansions

    def next_action(self, view, rng):
        if view.pending_evaluations or view.pending_expansions:
            return Stop("waiting")
        if not view.evaluated[0]:
            return Evaluate(view.ids[0], view.task_order[0])
        return Expand(view.ids[0]) if len(view.ids) <= self.expansions else Stop("done")

    def best(self, view):
        return None


def run_to_the_end(tmp: Path, transcript: list[str], style: str):
    """A real run: the seed's evaluation writes `transcript`; then MAX_CONSECUTIVE_INFRA expansions whose
    `improve` changes nothing (an invalid child each). (run, outcome)."""
    with expansion_place(tmp, models(transcript, style, modify="true")) as (run, _, place):
        executor = LocalExecutor(1)
        try:
            policy = EvaluateThenExpand(MAX_CONSECUTIVE_INFRA)
            outcome = Runner(
                run,
                policy,
                worker(run, place, style),
                executor,
                search_tasks=[TASK.id],
                budget=BudgetConfig(evaluations=2),
                concurrency=1,
                seed=0,
            ).execute()
        finally:
            executor.shutdown(cancel_pending=True)
        return run, outcome


@pytest.mark.parametrize("style", STYLES)
def test_a_poisoned_transcript_cannot_stop_a_run_as_infra(tmp_path, style):
    results = {}
    for name, transcript in (("honest", HONEST), ("attack", POISON)):
        run, outcome = run_to_the_end(tmp_path / name, transcript, style)
        failed = [job.detail for job in run.jobs() if job.state == "failed"]
        children = [(node.valid, node.reason) for node in run.nodes()[1:]]
        results[name] = (outcome.stop, failed, children)
    assert results["attack"] == results["honest"]
    stop, failed, children = results["attack"]
    assert stop == StopReason.POLICY and failed == []  # never StopReason.INFRA_STREAK
    assert children == [(False, NO_CHANGE)] * MAX_CONSECUTIVE_INFRA


@pytest.mark.parametrize(
    "shape",
    [
        "mkdir agent/helpers.py && echo 'X = 1' > agent/helpers.py/x.py",
        "ln -s helpers.py agent/helpers.py",
        "ln -s . agent/helpers.py",
    ],
)
def test_a_child_whose_python_file_is_no_file_is_judged_not_raised(tmp_path, shape):
    """The next form, in the child's own tree: a `.py` name that is a directory, a link loop or a link to a
    directory, beside an honest edit. The host reads the child's changed files (the cheap filters, the edit's
    kind): it raised IsADirectoryError out of the expansion, a failed job."""
    scripted = models(HONEST, "compact", modify=f"{NOTE} && {shape}")
    with expansion_place(tmp_path, scripted) as (run, node, place):
        result = worker(run, place, "compact").expand(run.start_job("expand", node.id), node)
    assert result.valid, result.reason  # the honest edit beside it is the child's; the odd name harms nothing


def test_in_docker_a_poisoned_transcript_cannot_stop_a_run_as_infra(tmp_path, base_image):
    """The same run with Docker sandboxes: the agent writes its transcript in its container, the engine
    copies it out and reads it on the host."""
    results = {}
    for name, transcript in (("honest", HONEST), ("attack", POISON)):
        run = Run.create(tmp_path / name / "run")
        run.add_node(executor_agent(tmp_path / name / "seed"), origin="seed")
        settings = WorkerSettings(meta=STYLES["compact"], expand=ExpandSettings())
        limits = SandboxLimits(wall_clock_s=120.0, memory="512m")
        executor = LocalExecutor(1)
        try:
            with Gateway(
                models(transcript, "compact", modify="true"),
                exchanges_dir=run.path / "exchanges",
                usage_sink=run,
            ) as gateway:
                engine = EngineWorker(
                    run,
                    {TASK.id: TASK},
                    gateway=gateway,
                    settings=settings,
                    seed=0,
                    sandboxes=DockerSandboxes(run.id, limits),
                )
                outcome = Runner(
                    run,
                    EvaluateThenExpand(MAX_CONSECUTIVE_INFRA),
                    engine,
                    executor,
                    search_tasks=[TASK.id],
                    budget=BudgetConfig(evaluations=2),
                    concurrency=1,
                    seed=0,
                ).execute()
        finally:
            executor.shutdown(cancel_pending=True)
        failed = [job.detail for job in run.jobs() if job.state == "failed"]
        results[name] = (outcome.stop, failed, [(node.valid, node.reason) for node in run.nodes()[1:]])
        run.close()
    assert results["attack"] == results["honest"]
    assert results["attack"] == (StopReason.POLICY, [], [(False, NO_CHANGE)] * MAX_CONSECUTIVE_INFRA)
