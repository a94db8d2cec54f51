"""The expansion's diagnosis, on the host: choose a problem from the node's failures and ask the
`diagnose` model (through the gateway, so it is counted and recorded) what the agent should change.

It reads the run's archive, so it runs where the archive is (the head, with a cluster); its
instructions are what the expansion's sandbox work (evolve.engine.expand) gets. Under `[meta]
procedure = "agent"` it only gathers the failure material: the node's own agent then chooses the
problem and writes the instructions in the expansion's sandbox work (evolve.meta.procedure).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from evolve.archive.records import FAILURE_OUTCOMES, Evaluation, Job, Node
from evolve.archive.store import Run
from evolve.config import MetaConfig
from evolve.engine.jobs import ExpansionResult
from evolve.meta import DiagnosisFailed, choose_problem, diagnose, read_failure
from evolve.meta.agentmap import AgentMap, agent_map
from evolve.meta.checks import weak_checks
from evolve.meta.crashes import crashed
from evolve.meta.dgm import dgm_instructions
from evolve.meta.diagnose import reply_format
from evolve.meta.evidence import TaskRun, compute_evidence, conversations_jsonl, recorded_run
from evolve.meta.locate import locate
from evolve.meta.locations import Location
from evolve.meta.modify import INSTRUCTIONS_JSON
from evolve.meta.ordered import misordered
from evolve.meta.problems import record_unread
from evolve.meta.procedure import Material, failure_material
from evolve.meta.profile import Markers, agent_profile
from evolve.meta.provenance import Recorded
from evolve.meta.returned import none_returns
from evolve.meta.shown import shown
from evolve.tasks.types import Task


def agent_files(code: Path) -> list[str]:
    """The agent's Python files, as the diagnosis names them."""
    return sorted(str(p.relative_to(code)) for p in code.rglob("*.py"))


def diagnose_node(
    run: Run,
    job: Job,
    node: Node,
    tasks: Mapping[str, Task],
    gateway,
    files: list[str],
    *,
    seed: int,
    job_tokens: int,
    meta: MetaConfig | None = None,
    parent_code: Path | None = None,
    extra_material: Mapping[str, str] | None = None,
    ranked: Sequence[Location] = (),
) -> str | Material | ExpansionResult:
    """Choose a problem from the node's failures and diagnose it through the gateway, on the host.

    Returns the rendered instructions (also written to the job's log), or the failed expansion; under
    the agent's procedure the material for its diagnose step instead (`extra_material`: more files for
    it, such as a pooled experience). `ranked`: more of the parent's lines ranked by another source (the
    execution spectra, evolve.engine.spectra), merged with the provenance of its requests."""
    log_dir = run.log_dir(job.id)
    if meta is not None and meta.style == "dgm" and parent_code is not None:
        return _diagnose_dgm(
            run, job, node, tasks, gateway, parent_code, seed=seed, job_tokens=job_tokens, meta=meta
        )
    evaluations = run.evaluations(node.id, split="dev")
    failures = [read_failure(e) for e in evaluations if e.outcome in FAILURE_OUTCOMES]
    record_unread(failures, log_dir)
    statements = {f.task: tasks[f.task].statement for f in failures if f.task in tasks}
    rng = np.random.default_rng([seed, job.draw])
    markers = agent_profile(parent_code).markers if parent_code is not None else None
    runs = node_runs(run, evaluations, tasks, markers)
    evidence = compute_evidence(runs)  # the engine's count, for the record under either procedure
    (log_dir / "evidence.md").write_text(evidence.render(limit=len(evidence.patterns)) + "\n")
    (log_dir / "evidence.json").write_text(json.dumps(evidence.to_json(), indent=1))
    if meta is not None and meta.procedure == "agent":  # the agent counts its own patterns and maps itself
        counted = [(e.task, e.outcome) for e in evaluations if e.outcome != "infra"]
        return failure_material(
            counted,
            failures,
            statements,
            files,
            rng,
            extra_material,
            conversations=conversations_jsonl(runs, CONVERSATIONS_CHARS),
        )
    agent = agent_map(parent_code) if parent_code is not None else files
    problem = choose_problem(failures, statements, rng)
    (log_dir / "problem.json").write_text(json.dumps(problem.__dict__, indent=2))
    # where the recorded data points in the parent's code: its requests' provenance and the given rankings
    locations = (
        locate(
            parent_code,
            [Recorded(r.outcome, r.exchanges) for r in runs],
            ranked=[
                ranked,
                shown(parent_code, runs),
                misordered(parent_code, runs),
                crashed(parent_code, runs),
                none_returns(parent_code, runs),
                weak_checks(parent_code, runs),
            ],
        )
        if parent_code
        else []
    )
    diagnose_job = f"{job.id}-diagnose"
    gateway.open_job(diagnose_job, node.id, "diagnose", job_tokens)
    try:
        shaped = reply_format(agent) if isinstance(agent, AgentMap) else None
        instructions = diagnose(
            GatewayCompleter(gateway, diagnose_job, shaped),
            problem,
            agent,
            evidence=evidence,
            evidence_first=meta is not None and meta.diagnosis == "evidence",
            locations=locations,
            code=parent_code,
        )
    except DiagnosisFailed as exc:
        return ExpansionResult(None, valid=False, reason=f"diagnosis failed: {exc}")
    finally:
        gateway.close_job(diagnose_job)
    (log_dir / "diagnosis.json").write_text(json.dumps(instructions.to_json(), indent=1))
    text = instructions.render()
    (log_dir / "instructions.md").write_text(text)
    (log_dir / INSTRUCTIONS_JSON).write_text(json.dumps(instructions.to_json(), indent=1))
    return text


EVIDENCE_EVALUATIONS = 60
"""Evaluations the evidence reads (the first counted ones): a long-evaluated node costs no more."""


CONVERSATIONS_CHARS = 400_000
"""The agent-side procedure's conversations.jsonl (evolve.meta.evidence.conversations_jsonl) stops here."""


def node_runs(
    run: Run,
    evaluations: Sequence[Evaluation],
    tasks: Mapping[str, Task],
    markers: Markers | None = None,
) -> list[TaskRun]:
    """A node's counted evaluations as the evidence reads them (evolve.meta.evidence), read from the
    gateway's exchanges of each evaluation's job (its log directory's name) and its log directory;
    `markers`: how the agent's own messages read (its profile's)."""
    runs = []
    for evaluation in [e for e in evaluations if e.outcome != "infra"][:EVIDENCE_EVALUATIONS]:
        log_dir = Path(evaluation.log_path) if evaluation.log_path else None
        job_id = log_dir.name.removeprefix("job-") if log_dir is not None else ""
        exchanges = run.exchanges_file(int(job_id)) if job_id.isdigit() else None
        task = tasks.get(evaluation.task)
        runs.append(
            recorded_run(
                evaluation.task,
                str(evaluation.outcome),
                log_dir,
                exchanges,
                task.statement if task is not None else "",
                markers,
            )
        )
    return runs


def _diagnose_dgm(
    run: Run,
    job: Job,
    node: Node,
    tasks: Mapping[str, Task],
    gateway,
    parent_code: Path,
    *,
    seed: int,
    job_tokens: int,
    meta: MetaConfig,
) -> str | ExpansionResult:
    """DGM's meta step (evolve/meta/dgm.py); its records are dgm-entry.json and diagnosis.json."""
    diagnose_job = f"{job.id}-diagnose"
    gateway.open_job(diagnose_job, node.id, "diagnose", job_tokens)
    try:
        text = dgm_instructions(
            run,
            node,
            {t: task.statement for t, task in tasks.items()},
            parent_code,
            GatewayCompleter(gateway, diagnose_job),
            rng=np.random.default_rng([seed, job.id]),
            show_test_results=meta.show_test_results,
            log_dir=run.log_dir(job.id),
        )
    except DiagnosisFailed as exc:
        return ExpansionResult(None, valid=False, reason=f"diagnosis failed: {exc}")
    finally:
        gateway.close_job(diagnose_job)
    (run.log_dir(job.id) / "instructions.md").write_text(text)
    return text


class GatewayCompleter:
    """`diagnose`'s completion function, served by the gateway so it is counted and recorded."""

    def __init__(self, gateway, job_id: str, response_format: dict | None = None) -> None:
        self._gateway = gateway
        self._job_id = job_id
        self._format = response_format
        """Sent with every request (`evolve.meta.diagnose.reply_format`): the reply constrained to it."""

    def __call__(self, messages: list[dict], temperature: float | None = None) -> str:
        request: dict = {"messages": messages}
        if temperature is not None:
            request["temperature"] = temperature
        if self._format is not None:
            request["response_format"] = self._format
        status, body = self._gateway.handle(
            self._job_id, "POST", "/v1/chat/completions", json.dumps(request).encode()
        )
        reply = json.loads(body)
        # a server that takes no schema: ask as before, from now on
        if status == 400 and self._format is not None:
            self._format = None
            return self(messages, temperature)
        if status != 200:
            raise DiagnosisFailed(f"the gateway answered {status}: {reply.get('error', reply)}")
        return reply["choices"][0]["message"].get("content") or ""
