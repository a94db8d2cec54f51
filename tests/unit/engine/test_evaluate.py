"""evaluate(): an infra failure is retried as a new job and, if it persists, recorded as `infra`."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from evolve.archive.records import counts_as
from evolve.archive.store import Run
from evolve.engine.evaluate import EvalSettings, evaluate
from evolve.sandbox.types import SandboxLimits, SandboxUnavailable
from evolve.seed import copy_seed
from evolve.tasks import load_suite


@dataclass
class FakeUsage:
    prompt_tokens: int = 0
    completion_tokens: int = 0


@dataclass
class FakeReport:
    usage: FakeUsage
    requests: int = 0
    upstream_failures: int = 0


@dataclass
class FakeChannel:
    socket_path: Path

    def sandbox_env(self) -> dict[str, str]:
        return {}


class FakeGateway:
    def __init__(self) -> None:
        self.opened: list[str] = []
        self.closed: list[str] = []

    def open_job(self, job_id, node_id, role, token_budget):
        self.opened.append(str(job_id))
        return FakeChannel(Path("/nonexistent.sock"))

    def close_job(self, job_id):
        self.closed.append(str(job_id))
        return FakeReport(FakeUsage())


class BrokenEngine:
    """A sandbox maker whose engine is down."""

    limits = SandboxLimits()
    isolating = True

    def __init__(self) -> None:
        self.calls: list[str] = []

    def __call__(self, image, job, *, gateway_socket=None, grader=False, writable_root=False):
        self.calls.append(job)
        raise SandboxUnavailable("the engine is down")


def test_infra_is_retried_then_recorded_as_infra(tmp_path):
    broken_engine = BrokenEngine()
    calls = broken_engine.calls

    run = Run.create(tmp_path / "run")
    node = run.add_node(copy_seed(tmp_path / "seed"))
    gateway = FakeGateway()
    task = load_suite("builtin").get("structs-heapsort")
    result = evaluate(
        run, node.id, task, sandboxes=broken_engine, gateway=gateway, settings=EvalSettings(infra_retries=2)
    )
    assert result.outcome == "infra" and "engine is down" in result.detail
    assert len(calls) == 3 and gateway.opened == gateway.closed  # every channel closed again
    assert [j.state for j in run.jobs()] == ["failed", "failed", "finished"]
    (evaluation,) = run.evaluations(node.id)
    assert evaluation.outcome == "infra" and counts_as(evaluation.outcome) is None
    assert evaluation.split == "heldout"
