"""`evolve agent check DIR`: does a directory meet the agent contract? The validation gate's checks, run on
it."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console

from evolve.errors import EvolveError
from evolve.llm.types import ChatRequest, ChatResponse, Message, ToolCall, Usage
from evolve.meta.validate import SMOKE_FIX

if TYPE_CHECKING:
    from evolve.llm.client import ChatModel
    from evolve.llm.types import Role

app = typer.Typer(
    name="agent",
    help="Agents as seeds: check that a directory meets the agent contract.",
    no_args_is_help=True,
)


class ContractStandIn:
    """`--scripted`: a stand-in model that checks the mechanics, not the agent's skill. Every answer holds
    the smoke task's fix twice: as a ```bash block (text-protocol agents) and as a `bash` tool call with
    a `command` argument (tool-call agents)."""

    name = "contract-stand-in"

    def completion_cap(self, request: ChatRequest) -> int:
        return min(request.max_tokens or 256, request.ceiling or 256, 256)

    def complete(self, request: ChatRequest) -> ChatResponse:
        call = ToolCall(id="call-1", name="bash", arguments=json.dumps({"command": SMOKE_FIX}))
        words = sum(len((m.content or "").split()) for m in request.messages)
        return ChatResponse(
            message=Message(role="assistant", content=f"```bash\n{SMOKE_FIX}\n```", tool_calls=(call,)),
            finish_reason="tool_calls",
            model=self.name,
            usage=Usage(prompt_tokens=words, completion_tokens=len(SMOKE_FIX.split())),
        )


@app.command("check")
def check(
    directory: Annotated[Path, typer.Argument(help="the agent's directory (it holds agent/__main__.py)")],
    config: Annotated[
        Path | None,
        typer.Option(
            help='run config TOML: its solve model, sandbox limits, and [meta] procedure ("agent": diagnose '
            "is checked too)"
        ),
    ] = None,
    scripted: Annotated[
        bool, typer.Option(help="a stand-in model that always sends the smoke fix (no real model)")
    ] = False,
    timeout: Annotated[float, typer.Option(help="seconds for each of the agent's commands")] = 300.0,
) -> None:
    """Run the validation gate's contract checks on DIR and print each; exit 1 naming the first that fails."""
    from evolve.config import RunConfig, load_config
    from evolve.llm.budget import GatewayLimits
    from evolve.llm.gateway import Gateway
    from evolve.llm.stack import ModelStack
    from evolve.meta.validate import check_agent
    from evolve.sandbox.factory import DockerSandboxes, limits_from_config
    from evolve.seed import agent_problem

    if problem := agent_problem(directory):
        raise EvolveError(problem)
    cfg = load_config(config) if config else RunConfig()
    console = Console(highlight=False)
    failed: list[str] = []

    def show(name: str, reason: str | None) -> None:
        console.print(
            f"  {'ok  ' if reason is None else 'FAIL'} {name}" + ("" if reason is None else f": {reason}"),
            markup=False,
        )
        if reason is not None:
            failed.append(name)

    from evolve.cli.standins import STANDINS

    stack = None if scripted else ModelStack(cfg.models, seed=cfg.run.seed, standins=STANDINS).start()
    models: Mapping[Role, ChatModel] = {"solve": ContractStandIn()} if stack is None else stack.models
    job, run_id = "agent-check", f"agent-check-{os.getpid()}"
    try:
        with (
            Gateway(models, limits=GatewayLimits.of(cfg.gateway)) as gateway,
            tempfile.TemporaryDirectory(prefix="evolve-agent-check-") as logs,
        ):
            channel = gateway.open_job(job, "agent", "solve", cfg.budget.job_tokens)
            console.print(
                f"checking {directory} with {'a stand-in model' if scripted else 'the solve model'}"
            )
            sandboxes = DockerSandboxes(run_id, limits_from_config(cfg.sandbox))
            try:
                with sandboxes(cfg.sandbox.image, job, gateway_socket=channel.socket_path) as box:
                    verdict = check_agent(
                        box,
                        directory.resolve(),
                        Path(logs),
                        channel_env=channel.sandbox_env(),
                        served=lambda: gateway.report(job).requests,
                        timeout_s=timeout,
                        diagnose=cfg.meta.procedure == "agent",
                        on_check=show,
                    )
            finally:
                gateway.close_job(job)
            if not verdict.valid:  # the gate's logs say why: print them before they go
                for log in sorted(Path(logs).iterdir()):
                    console.print(f"--- {log.name}\n{log.read_text(errors='replace')[-2000:]}", markup=False)
    finally:
        if stack is not None:
            stack.close()
    if failed:
        raise EvolveError(f"{directory} does not meet the agent contract: check '{failed[0]}' failed")
    console.print(f"{directory} meets the agent contract")
