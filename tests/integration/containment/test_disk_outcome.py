"""A job whose agent fills the sandbox's disk ends as an error that says so (measured by the host),
whether its disk is tmpfs on a read-only root or a writable root capped by its layer (SWE-bench's)."""

from __future__ import annotations

import pytest

from evolve.archive.store import Run
from evolve.engine.evaluate import EvalSettings, evaluate
from evolve.llm.gateway import Gateway
from evolve.sandbox import SandboxLimits
from evolve.sandbox.factory import DockerSandboxes
from evolve.standins.models import ScriptedModel
from evolve.tasks import load_suite

# Writes until the disk is full, then exits 1 claiming nothing about it (on a writable root the host
# kills it first: its disk is the host's).
FILLER = """
import sys
with open("/work/filler", "wb") as out:
    try:
        while True:
            out.write(b"x" * (1 << 20))
    except OSError:
        pass
print("all good")
sys.exit(1)
"""


@pytest.mark.parametrize(
    "limits",
    [
        SandboxLimits(memory="256m", pids=64, wall_clock_s=120, disk="32m"),
        # `disk` past `memory`: files are memory, so unbounded they would starve every process and take the
        # container down (`infra`, which never counts); the places together stay under the memory.
        SandboxLimits(memory="96m", pids=64, wall_clock_s=120, disk="1g"),
        SandboxLimits(
            memory="256m", pids=64, wall_clock_s=120, disk=None, layer_disk="64m", layer_poll_s=0.5
        ),
    ],
    ids=["tmpfs", "tmpfs-over-memory", "writable-root"],
)
def test_an_agent_that_fills_the_disk_is_an_error_saying_so(tmp_path, base_image, limits):
    code = tmp_path / "code"
    (code / "agent").mkdir(parents=True)
    (code / "agent" / "__init__.py").write_text("")
    (code / "agent" / "__main__.py").write_text(FILLER)
    with Run.create(tmp_path / "run") as run:
        node = run.add_node(code, origin="seed")
        task = load_suite("builtin").get("structs-lru-recency")
        with Gateway({"solve": ScriptedModel(["x"])}) as gateway:
            result = evaluate(
                run,
                node.id,
                task,
                sandboxes=DockerSandboxes(run.id, limits=limits),
                gateway=gateway,
                settings=EvalSettings(budget_steps=2),
            )
    assert result.outcome == "error" and "disk was full" in result.detail, result.detail
