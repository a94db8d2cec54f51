"""`evolve sandbox ...`: build images, run one command in a sandbox, sweep leftovers."""

from __future__ import annotations

import uuid
from typing import Annotated

import typer

app = typer.Typer(name="sandbox", help="Sandbox images, debugging and cleanup.", no_args_is_help=True)


@app.command("build")
def build(
    tag: str = typer.Option("evolve-base:latest", help="Image tag to build."),
    offline: bool | None = typer.Option(
        None, "--offline/--online", help="Force the build path (default: offline when no registry answers)."
    ),
) -> None:
    """Build the base image (sandboxes/base): from the Dockerfile online, from a debootstrap rootfs offline."""
    from evolve.sandbox.images import build_image

    info = build_image(tag, offline=offline)
    typer.echo(f"built {info.name} ({info.how}): {info.id}")


@app.command("exec", context_settings={"allow_interspersed_args": False})
def exec_command(
    cmd: Annotated[list[str], typer.Argument(help="The command and its arguments (put them after --).")],
    image: str = typer.Option("evolve-base:latest", help="Image to run in."),
    timeout: float = typer.Option(60.0, min=0.1, help="Command timeout in seconds."),
    memory: str = typer.Option("2g", help="Memory limit (docker syntax: 512m, 2g)."),
    cpus: float = typer.Option(1.0, min=0.01, help="CPU quota in cores."),
    pids: int = typer.Option(256, min=1, help="Process limit."),
) -> None:
    """Run one command in a fresh Docker sandbox with the default limits; print its output and exit code."""
    from evolve.sandbox.docker_backend import DockerSandbox
    from evolve.sandbox.types import SandboxLimits

    limits = SandboxLimits(cpus=cpus, memory=memory, pids=pids, wall_clock_s=timeout + 30)
    with DockerSandbox.create(
        image, run_id="cli", job_id=f"exec-{uuid.uuid4().hex[:8]}", limits=limits
    ) as box:
        result = box.exec(cmd, timeout=timeout)
    typer.echo(result.stdout, nl=False)
    typer.echo(result.stderr, nl=False, err=True)
    flags = [name for name in ("timed_out", "oom_killed", "truncated") if getattr(result, name)]
    typer.echo(
        f"exit code {result.returncode} in {result.duration:.2f}s {' '.join(flags)}".rstrip(), err=True
    )
    raise typer.Exit(result.returncode if 0 <= result.returncode < 256 else 1)


@app.command("cleanup")
def cleanup_command(
    run: str | None = typer.Argument(None, help="Run id whose containers to remove (default: every run's)."),
) -> None:
    """Remove leftover sandbox containers (labelled evolve.run=RUN, or any evolve.run)."""
    from evolve.sandbox.cleanup import cleanup

    removed = cleanup(run)
    typer.echo(f"removed {len(removed)} container(s)" + (f" of run {run}" if run else ""))
