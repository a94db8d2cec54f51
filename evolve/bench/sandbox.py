"""`evolve bench sandbox`: how long a sandbox costs (create → exec `true` → destroy; 10 MB in; a diff out)."""

from __future__ import annotations

import random
import statistics
import tempfile
import time
import uuid
from dataclasses import asdict, dataclass
from pathlib import Path

import docker

from evolve.sandbox.cleanup import cleanup
from evolve.sandbox.docker_backend import DockerSandbox
from evolve.sandbox.engine import engine_client
from evolve.sandbox.images import DEFAULT_IMAGE
from evolve.sandbox.repo import snapshot
from evolve.sandbox.types import SandboxError, SandboxLimits
from evolve.tasks.tree_diff import diff_entries, tree_entries


@dataclass(frozen=True)
class Timing:
    median: float
    p95: float

    @classmethod
    def of(cls, seconds: list[float]) -> Timing:
        ordered = sorted(seconds)
        index = min(len(ordered) - 1, max(0, round(0.95 * (len(ordered) - 1))))
        return cls(round(statistics.median(ordered), 4), round(ordered[index], 4))


@dataclass(frozen=True)
class SandboxBench:
    create_exec_destroy_s: Timing
    copy_in_10mb_s: Timing
    diff_out_s: Timing
    runs: int
    image: str

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def make_repository(root: Path, *, total_bytes: int = 10 * 2**20, files: int = 200, seed: int = 0) -> Path:
    """A source-like tree of `files` text files totalling about `total_bytes`."""
    rng = random.Random(seed)
    per_file = total_bytes // files
    for index in range(files):
        path = root / f"pkg{index % 10}" / f"module_{index}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        lines, size = [], 0
        while size < per_file:
            line = f"value_{rng.getrandbits(64):016x} = {rng.getrandbits(48)}  # {rng.getrandbits(64):x}\n"
            lines.append(line)
            size += len(line)
        path.write_text("".join(lines))
    return root


def bench_sandbox(
    runs: int = 10, *, image: str = DEFAULT_IMAGE, client: docker.DockerClient | None = None
) -> SandboxBench:
    """Time `runs` rounds of each operation on the Docker backend; leaves no container behind."""
    run_id = f"bench-{uuid.uuid4().hex[:8]}"
    limits = SandboxLimits(memory="1g", pids=256, wall_clock_s=600)
    lifecycle, copy_in, diff_out = [], [], []
    with engine_client(client) as engine, tempfile.TemporaryDirectory(prefix="evolve-bench-") as tmp:
        repo = make_repository(Path(tmp) / "repo")
        try:
            for index in range(runs):
                started = time.perf_counter()
                with DockerSandbox.create(
                    image, run_id=run_id, job_id=f"cycle-{index}", limits=limits, client=engine
                ) as sandbox:
                    sandbox.exec(["true"])
                lifecycle.append(time.perf_counter() - started)
            with DockerSandbox.create(
                image, run_id=run_id, job_id="copy", limits=limits, client=engine
            ) as sandbox:
                for index in range(runs):
                    started = time.perf_counter()
                    sandbox.put_dir(repo, f"repo{index}")
                    copy_in.append(time.perf_counter() - started)
                    snapshot(sandbox, f"repo{index}")
                    sandbox.exec(
                        ["sh", "-c", "sed -i 's/= 1/= 2/' pkg0/*.py && echo new > added.txt"],
                        cwd=f"repo{index}",
                    )
                    started = time.perf_counter()  # the engine's path: copy the tree out, diff it on the host
                    sandbox.get_dir(f"repo{index}", Path(tmp) / f"out{index}")
                    patch = diff_entries(tree_entries(repo), tree_entries(Path(tmp) / f"out{index}"))
                    diff_out.append(time.perf_counter() - started)
                    if "added.txt" not in patch:
                        raise SandboxError("benchmark diff is missing the added file")
        finally:
            cleanup(run_id, client=engine)
    return SandboxBench(Timing.of(lifecycle), Timing.of(copy_in), Timing.of(diff_out), runs, image)
