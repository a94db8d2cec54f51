"""The host-side diagnosis: evidence computed from the node's recorded conversations, the agent's map,
and a reply that must name one target of that map, through a real gateway."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from evolve.archive.store import Run
from evolve.archive.vocab import Split
from evolve.config import MetaConfig
from evolve.engine.diagnosis import diagnose_node
from evolve.llm.gateway import Gateway
from evolve.meta.diagnose import target_of
from evolve.seed import copy_seed
from evolve.standins.models import ScriptedModel
from evolve.tasks.types import Task

FIXTURE = Path(__file__).parents[1] / "meta" / "fixtures" / "humaneval-cpu" / "exchanges" / "job-228.jsonl"
TASK = Task(
    id="HumanEval-74",
    suite="humaneval",
    split=Split.DEV,
    statement="Complete the function `total_match` in `solution.py`.",
    repo={"solution.py": b"def total_match(a, b):\n    raise NotImplementedError\n"},
    hidden_tests={},
    reference_patch="",
    test_command="true",
)
TASK_CODE = json.dumps({"target": "solution.py:total_match", "change": "return the shorter list"})
AGENT_FIX = json.dumps(
    {
        "target": "agent/tools.py:Workspace.bash",
        "change": "run python as python3",
        "problem": "python: command not found",
        "cause": "the sandbox has only python3",
    }
)


def recorded_node(tmp_path: Path):
    """A run whose seed node failed HumanEval-74 as the published CPU run recorded it (job 228)."""
    run = Run.create(tmp_path / "run")
    node = run.add_node(copy_seed(tmp_path / "seed"))
    log = tmp_path / "logs" / "job-228"
    log.mkdir(parents=True)
    (log / "diff.patch").write_text("")
    shutil.copy(FIXTURE, run.exchanges_file(228))
    run.record_evaluation(node.id, TASK.id, "fail", log_path=str(log))
    return run, node, run.start_job("expand", node.id)


def diagnosed(run, job, node, gateway, tmp_path: Path):
    """The engine's compact diagnosis of the recorded node (`recorded_node`), the seed as its code."""
    return diagnose_node(
        run,
        job,
        node,
        {TASK.id: TASK},
        gateway,
        ["agent/tools.py"],
        seed=0,
        job_tokens=100_000,
        meta=MetaConfig(),
        parent_code=tmp_path / "seed",
    )


def test_the_engines_diagnosis_reads_evidence_and_map_and_asks_again_for_task_code(tmp_path):
    run, node, job = recorded_node(tmp_path)
    model = ScriptedModel([TASK_CODE, AGENT_FIX])
    with Gateway({"diagnose": model}, exchanges_dir=run.path / "exchanges") as gateway:
        text = diagnosed(run, job, node, gateway, tmp_path)
    assert isinstance(text, str) and target_of(text) == "agent/tools.py:Workspace.bash"
    log = run.log_dir(job.id)
    assert json.loads((log / "diagnosis.json").read_text())["target"] == "agent/tools.py:Workspace.bash"
    assert 'tool error "python: command not found": 2 times in 1 task' in (log / "evidence.md").read_text()
    first = model.requests[0].messages[-1].content or ""
    assert "python: command not found" in first and "agent/loop.py:Agent.run(task, " in first
    assert "'solution.py:total_match' is not part of the agent" in (
        model.requests[1].messages[-1].content or ""
    )
    # each request asks for the reply's shape, its target one of the map's names (a grammar on the embedded
    # server)
    shaped = [request.response_format for request in model.requests]
    assert shaped[0] == shaped[1] and shaped[0] is not None
    assert (
        "agent/tools.py:Workspace.bash" in shaped[0]["json_schema"]["schema"]["properties"]["target"]["enum"]
    )


def test_a_diagnosis_that_keeps_naming_task_code_gets_instructions_at_the_top_ranked_location(tmp_path):
    """The computed instructions name where the recorded requests came from in the parent's code (provenance,
    evolve.meta.locate), whatever the agent's names; `instructions.json` beside the text carries them as
    data."""
    from evolve.meta.locations import Location

    run, node, job = recorded_node(tmp_path)
    with Gateway({"diagnose": ScriptedModel([TASK_CODE])}) as gateway:
        text = diagnosed(run, job, node, gateway, tmp_path)
    assert isinstance(text, str)
    log = run.log_dir(job.id)
    recorded = json.loads((log / "diagnosis.json").read_text())
    assert json.loads((log / "instructions.json").read_text()) == recorded
    top = Location.from_json(recorded["locations"][0])
    assert (
        recorded["source"] == "evidence"
        and top is not None
        and top.score >= recorded["locations"][-1]["score"]
    )
    assert target_of(text) == recorded["target"] and recorded["target"].partition(":")[0] == top.path
    assert (
        f"Change line {top.line} of {top.path}" in recorded["change"] and top.evidence in recorded["change"]
    )
    source = (tmp_path / "seed" / top.path).read_text().splitlines()
    assert source[top.line - 1] in recorded["lines"]  # the parent's line, under its number


def test_the_agents_procedure_gets_the_recorded_conversations_to_count_itself(tmp_path):
    run, node, job = recorded_node(tmp_path)
    brief = diagnose_node(
        run,
        job,
        node,
        {TASK.id: TASK},
        None,
        ["agent/tools.py"],
        seed=0,
        job_tokens=1,
        meta=MetaConfig(procedure="agent"),
        parent_code=tmp_path / "seed",
    )
    files = dict(brief.files)  # type: ignore[union-attr]
    assert "EVIDENCE.md" not in files and "MAP.md" not in files  # the agent's own code computes both
    (recorded,) = [json.loads(line) for line in files["conversations.jsonl"].splitlines()]
    assert recorded["task"] == TASK.id and recorded["outcome"] == "fail" and recorded["edited"] is False
    assert any("python: command not found" in (turn["output"] or "") for turn in recorded["turns"])
    assert "Target: FILE:NAME" in files["README.md"] and "conversations.jsonl" in files["README.md"]
    # the engine still keeps its own count in the job's log, for people
    assert "python: command not found" in (run.log_dir(job.id) / "evidence.md").read_text()


class _NoSchemas(ScriptedModel):
    """A server that refuses `response_format` as an unknown parameter (an older OpenAI-style server)."""

    def complete(self, request):
        from evolve.llm.failures import ModelError

        if request.response_format is not None:
            self.refused = getattr(self, "refused", 0) + 1
            raise ModelError("unknown parameter response_format", "request", 400)
        return super().complete(request)


def test_a_server_that_takes_no_reply_format_is_asked_again_without_one(tmp_path):
    run, node, job = recorded_node(tmp_path)
    model = _NoSchemas([TASK_CODE, AGENT_FIX])
    with Gateway({"diagnose": model}) as gateway:
        text = diagnosed(run, job, node, gateway, tmp_path)
    assert isinstance(text, str) and target_of(text) == "agent/tools.py:Workspace.bash"
    assert model.refused == 1 and all(request.response_format is None for request in model.requests)


def test_the_frames_of_a_traceback_the_failed_run_ended_with_are_among_the_locations(tmp_path):
    """The agent's own crash points at its lines (evolve.meta.crashes): the raising frame, then its caller."""
    run, node, job = recorded_node(tmp_path)
    crash = (
        "Traceback (most recent call last):\n"
        '  File "/sandbox/agent/agent/__main__.py", line 42, in main\n'
        "    status = solve(agent, args.text.read_text())\n"
        '  File "/sandbox/agent/agent/commands.py", line 11, in solve\n'
        "    ...\n"
        "TypeError: expected string or bytes-like object, got 'PosixPath'\n"
    )
    log = Path(run.evaluations(node.id)[0].log_path or "")  # the run's own logs/job-228
    log.mkdir(parents=True, exist_ok=True)
    (log / "agent.log").write_text(f"exit 1, 0.4 s, timed out False\n--- stdout\n\n--- stderr\n{crash}")
    with Gateway({"diagnose": ScriptedModel([AGENT_FIX])}) as gateway:
        diagnosed(run, job, node, gateway, tmp_path)
    located = json.loads((run.log_dir(job.id) / "instructions.json").read_text())["locations"]
    crashed = [(found["path"], found["line"]) for found in located if "traceback" in found["evidence"]]
    assert crashed == [("agent/commands.py", 11), ("agent/__main__.py", 42)]
