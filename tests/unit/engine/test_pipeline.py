"""The one job pipeline on this machine: the real evaluation and expansion work on process sandboxes,
scripted models through a real gateway, placed `Here` as the local worker places it.

tests/integration/cluster/test_pipeline_on_ray.py runs the same cases on a Ray cluster and expects
the same outcomes and timeouts (tests/unit/engine/pipeline_cases.py)."""

from __future__ import annotations

import socket

from evolve.archive.store import Run
from evolve.engine.worker import Here
from evolve.llm.gateway import Gateway
from tests.unit.engine.pipeline_cases import MODELS, agent_code, check, run_cases


def test_evaluation_and_expansion_here_come_to_the_expected_outcomes_and_timeouts(tmp_path):
    run = Run.create(tmp_path / "run")
    run.add_node(agent_code(tmp_path / "agent"))
    with Gateway(MODELS, exchanges_dir=run.path / "exchanges") as gateway:
        got, wheres = run_cases(run, lambda sandboxes: Here(run, sandboxes, gateway))
    check(got)
    assert wheres == {socket.gethostname()}
