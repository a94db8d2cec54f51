"""What one job's sandbox work needs, wherever it runs: the job context, and the one timeout rule.

An evaluation (evolve.engine.evaluate) and an expansion (evolve.engine.expand) are each one function
over a `JobContext`: a sandbox maker, the model channels, the node's code, a log directory and the
sandboxes' limits. Locally the context is made from the run (`local_context`); on a cluster node from
the shipped job (evolve.cluster.node). The functions are the same, so are their outcomes and timeouts.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, TypeVar

from evolve.llm.types import Role, Usage
from evolve.sandbox.types import Sandbox, SandboxLimits

if TYPE_CHECKING:
    from evolve.archive.store import Run


class SandboxMaker(Protocol):
    """Makes a fresh sandbox from `image`, labelled with `job`, optionally with the model channel mounted
    (evolve.sandbox.factory's `DockerSandboxes` and `ProcessSandboxes` fit)."""

    @property
    def limits(self) -> SandboxLimits:
        """Every sandbox's limits; the agent's timeouts derive from their wall clock."""
        ...

    @property
    def isolating(self) -> bool:
        """Its graders run the tests as another uid; only the process backend's do not (tests only)."""
        ...

    def __call__(
        self,
        image: str,
        job: str,
        *,
        gateway_socket: Path | None = None,
        grader: bool = False,
        writable_root: bool = False,
    ) -> Sandbox:
        """`grader=True`: a grading sandbox, whose grader runs as root and its tests as uid 1000.
        `writable_root`: for images whose tools write anywhere (a SWE-bench instance's); no disk cap then."""
        ...


class Channel(Protocol):
    @property
    def socket_path(self) -> Path: ...

    def sandbox_env(self) -> dict[str, str]: ...


class Report(Protocol):
    """What the gateway itself saw of a job (`evolve.llm.gateway.JobReport` fits)."""

    @property
    def usage(self) -> Usage: ...

    @property
    def requests(self) -> int: ...

    @property
    def upstream_failures(self) -> int: ...


class Channels(Protocol):
    """The model gateway as jobs use it (`evolve.llm.gateway.Gateway`, on a node
    `evolve.llm.relay.RelayChannels`)."""

    def open_job(self, job_id: str | int, node_id: str, role: Role, token_budget: int) -> Channel: ...

    def report(self, job_id: str | int) -> Report:
        """What an open job was served so far (the validation gate's request count)."""
        ...

    def close_job(self, job_id: str | int) -> Report: ...


@dataclass(frozen=True)
class ChannelSpec:
    """A model channel a job's work opens: the gateway job's id, its role and token budget.

    On a cluster the head opens it (a grant) before the work is shipped."""

    job: str
    role: Role
    tokens: int


@dataclass(frozen=True)
class JobContext:
    job: str
    """The job's id as sandbox labels and gateway jobs name it."""
    node_id: str
    code: Path
    """The node's code, checked out on this machine."""
    log_dir: Path
    sandboxes: SandboxMaker
    channels: Channels

    def agent_timeout(self, *, runs: int = 1) -> float:
        """Each agent run's timeout in this job's sandboxes (`agent_timeout`)."""
        return agent_timeout(self.sandboxes.limits.wall_clock_s, runs=runs)


def agent_timeout(wall_clock_s: float, *, runs: int = 1) -> float:
    """The one timeout rule: agent runs end before their sandbox does, leaving time to take the diff.

    `runs` agent runs one after another in one sandbox each get an equal share."""
    return (wall_clock_s - min(60.0, 0.2 * wall_clock_s)) / runs


@contextmanager
def local_context(
    run: Run, job_id: int, node_id: str, *, sandboxes: SandboxMaker, channels: Channels
) -> Iterator[JobContext]:
    """A job's context on this machine: the node's code checked out from the run, the run's log directory."""
    with tempfile.TemporaryDirectory(prefix="evolve-job-") as tmp:
        code = run.checkout(node_id, Path(tmp) / "code")
        yield JobContext(str(job_id), node_id, code, run.log_dir(job_id), sandboxes, channels)


R_co = TypeVar("R_co", covariant=True)


class Work(Protocol[R_co]):
    """A job's sandbox work (evolve.engine.evaluate.Evaluation, evolve.engine.expand.Expansion): plain
    data, so it can be shipped to a cluster node, with the model channels it opens."""

    def channels(self, job: str) -> tuple[ChannelSpec, ...]: ...

    def __call__(self, ctx: JobContext) -> R_co: ...
