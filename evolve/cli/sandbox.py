"""`evolve sandbox ...`: build images, run one command in a sandbox, sweep leftovers."""

from __future__ import annotations

import contextlib
import signal
import uuid
from collections.abc import Iterator
from typing import Annotated

import typer

app = typer.Typer(name="sandbox", help="Sandbox images, debugging and cleanup.", no_args_is_help=True)


@app.command("build")
def build(
    tag: Annotated[str, typer.Option(help="Image tag to build.")] = "evolve-base:latest",
    offline: Annotated[
        bool | None,
        typer.Option(
            "--offline/--online", help="Force the build path (default: offline when no registry answers)."
        ),
    ] = None,
) -> None:
    """Build the base image (sandboxes/base): from the Dockerfile online, from a debootstrap rootfs
    offline."""
    from evolve.sandbox.images import build_image

    info = build_image(tag, offline=offline)
    typer.echo(f"built {info.name} ({info.how}): {info.id}")


@app.command("exec", context_settings={"allow_interspersed_args": False})
def exec_command(
    cmd: Annotated[list[str], typer.Argument(help="The command and its arguments (put them after --).")],
    image: Annotated[str, typer.Option(help="Image to run in.")] = "evolve-base:latest",
    timeout: Annotated[float, typer.Option(min=0.1, help="Command timeout in seconds.")] = 60.0,
    memory: Annotated[str, typer.Option(help="Memory limit (docker syntax: 512m, 2g).")] = "2g",
    cpus: Annotated[float, typer.Option(min=0.01, help="CPU quota in cores.")] = 1.0,
    pids: Annotated[int, typer.Option(min=1, help="Process limit.")] = 256,
    disk: Annotated[
        str,
        typer.Option(help='Size of each writable place (docker syntax), or "none" (writable root).'),
    ] = "1g",
) -> None:
    """Run one command in a fresh Docker sandbox with the default limits; print its output and exit code.

    The container is removed on normal exit, Ctrl-C and SIGTERM; containers of earlier `exec`s that
    were killed outright (SIGKILL) are swept first."""
    from evolve.sandbox.cleanup import sweep_orphans
    from evolve.sandbox.docker_backend import DockerSandbox
    from evolve.sandbox.types import SandboxLimits

    sweep_orphans()
    limits = SandboxLimits(
        cpus=cpus, memory=memory, pids=pids, wall_clock_s=timeout + 30, disk=None if disk == "none" else disk
    )
    with (
        _terminate_as_exit(),
        DockerSandbox.create(
            image, run_id="cli", job_id=f"exec-{uuid.uuid4().hex[:8]}", limits=limits
        ) as box,
    ):
        result = box.exec(cmd, timeout=timeout)
    typer.echo(result.stdout, nl=False)
    typer.echo(result.stderr, nl=False, err=True)
    flags = [name for name in ("timed_out", "oom_killed", "truncated", "disk_full") if getattr(result, name)]
    typer.echo(
        f"exit code {result.returncode} in {result.duration:.2f}s {' '.join(flags)}".rstrip(), err=True
    )
    raise typer.Exit(result.returncode if 0 <= result.returncode < 256 else 1)


@contextlib.contextmanager
def _terminate_as_exit() -> Iterator[None]:
    """SIGTERM (and SIGHUP) unwind like Ctrl-C, so the `with` that owns a container removes it."""

    def stop(signum: int, _frame: object) -> None:
        raise SystemExit(128 + signum)

    previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


@app.command("cleanup")
def cleanup_command(
    run: Annotated[
        str | None,
        typer.Argument(
            help="Run id whose containers to remove (default: those whose owning process is gone)."
        ),
    ] = None,
) -> None:
    """Remove leftover sandbox containers: all of RUN's, or without RUN every one whose owner died
    (a live run's or another host's containers are kept and listed)."""
    from evolve.sandbox.cleanup import cleanup, sweep_orphans

    if run:
        removed = cleanup(run)
        typer.echo(f"removed {len(removed)} container(s) of run {run}")
        return
    sweep = sweep_orphans()
    typer.echo(f"removed {len(sweep.removed)} container(s) whose owner is gone; kept {len(sweep.kept)}")
    for container_id, why in sweep.kept:
        typer.echo(f"  kept {container_id[:12]}: {why}")
