"""`evolve bench ...`: benchmark commands that print numbers (speed and quality targets)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

app = typer.Typer(name="bench", help="Benchmarks that print numbers.", no_args_is_help=True)


@app.command("model")
def model(
    contention: Annotated[
        int, typer.Option(min=0, help="Also measure with N busy competitor processes.")
    ] = 0,
    soak: Annotated[
        float,
        typer.Option(
            min=0, help="Then interleave conversations this many seconds, sampling the server's memory."
        ),
    ] = 0.0,
    threads: Annotated[
        int | None, typer.Option(min=1, help="Generation threads (default: the policy's).")
    ] = None,
    threads_batch: Annotated[
        int | None, typer.Option(min=1, help="Prompt threads (default: threads).")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """The embedded model through its server: tokens/s idle and contended, prompt-cache hits of two
    interleaved conversations, the server's memory."""
    import json

    from evolve.bench.model import bench_model
    from evolve.config import ModelConfig
    from evolve.llm.client import OpenAICompatible
    from evolve.llm.stack import embedded_server

    server = embedded_server(ModelConfig(threads=threads, threads_batch=threads_batch))
    with server:
        client = OpenAICompatible(server.base_urls[0], server.model, max_tokens=256)
        assert server.pid is not None
        plan = server.threads
        result = bench_model(client, server.pid, (plan.threads, plan.threads_batch), contention, soak)
    if as_json:
        typer.echo(json.dumps(result.as_json()))
        return
    _print_model(result)


def _print_model(result) -> None:
    def speed(report, load) -> str:
        return (
            f"prompt {report.prompt_tokens_per_s:.1f} tokens/s, generation "
            f"{report.generation_tokens_per_s:.1f} "
            f"tokens/s (load {load:.2f})"
        )

    typer.echo(f"{result.idle.model}: {result.threads} threads, {result.threads_batch} prompt threads")
    typer.echo(f"idle          {speed(result.idle, result.idle_load)}")
    if result.contended is not None:
        ratio = result.contended.generation_tokens_per_s / max(result.idle.generation_tokens_per_s, 1e-9)
        typer.echo(
            f"{result.competitors} competitor(s) {speed(result.contended, result.contended_load)}; "
            f"generation {ratio:.0%} of idle"
        )
    for role in result.cache.roles:
        typer.echo(
            f"cache {role:<7} hit rate {result.cache.hit_rate(role):.0%}; its second turn read "
            f"{result.cache.reread(role):.1%} of its prefix again (interleaved with the other)"
        )
    typer.echo(f"server memory {result.memory.rss_mb:.0f} MiB, peak {result.memory.peak_mb:.0f} MiB")
    if result.soak is not None:
        soaked = result.soak.as_json()
        typer.echo(
            f"soak {soaked['seconds']} s, {soaked['requests']} requests: RSS {soaked['first_rss_mb']} -> "
            f"{soaked['last_rss_mb']} MiB, peak {soaked['peak_rss_mb']} MiB"
        )


@app.command("lookup")
def lookup(
    bundles: Annotated[
        list[Path], typer.Argument(help="Exported bundles or run directories with exchanges.")
    ],
    role: Annotated[
        str | None, typer.Option(help="Only this role's replies (diagnose, modify, solve).")
    ] = None,
    draft_tokens: Annotated[int, typer.Option(min=1, help="Tokens drafted per step.")] = 10,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Prompt-lookup drafting replayed over recorded replies (the real tokenizer, no model run): how
    many tokens each verification step would yield."""
    import json

    from evolve.bench.lookup import bench_lookup, recorded_exchanges
    from evolve.llm.embedded import ensure_embedded_model
    from evolve.llm.llama_fix import load_llama

    missing = [str(b) for b in bundles if not b.exists()]
    if missing:
        raise typer.BadParameter(f"no such bundle or run: {', '.join(missing)}", param_hint="BUNDLES")
    llama = load_llama(ensure_embedded_model(), vocab_only=True, verbose=False)
    result = bench_lookup(
        list(recorded_exchanges(bundles, role)),
        lambda text: llama.tokenize(text.encode(), add_bos=False),
        draft_tokens=draft_tokens,
    )
    summary = result.as_json()
    if as_json:
        typer.echo(json.dumps(summary))
        return
    typer.echo(
        f"{summary['replies']} replies, {summary['tokens']} tokens: {summary['tokens_per_step']} tokens per "
        f"verification step (median reply {summary['median_reply_tokens_per_step']}), "
        f"{summary['drafted_per_step']} drafted per step"
    )


@app.command("sandbox")
def sandbox(
    runs: Annotated[int, typer.Option(min=2, help="Rounds of each operation.")] = 10,
    image: Annotated[str, typer.Option(help="Image to time.")] = "evolve-base:latest",
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Docker sandbox costs: create → exec `true` → destroy; copy a 10 MB repository in; a diff out."""
    import json

    from evolve.bench.sandbox import bench_sandbox

    report = bench_sandbox(runs, image=image)
    rows = {
        "create_exec_destroy_s": report.create_exec_destroy_s,
        "copy_in_10mb_s": report.copy_in_10mb_s,
        "diff_out_s": report.diff_out_s,
    }
    if as_json:
        typer.echo(json.dumps({name: {"median": t.median, "p95": t.p95} for name, t in rows.items()}))
        return
    for name, timing in rows.items():
        typer.echo(f"{name:<24} median {timing.median:.3f} s   p95 {timing.p95:.3f} s   ({runs} runs)")


def _policies_from_config(path):
    """The four policies with the parameters of a run config's `policy` section."""
    from evolve.config import load_config
    from evolve.launch import policies_from_config

    return policies_from_config(load_config(path).policy)


@app.command("search")
def search(
    policies: Annotated[
        str,
        typer.Option(help="Comma-separated policies to compare."),
    ] = "hgm,dgm,gea,greedy,random",
    budget: Annotated[int, typer.Option(min=1, help="Task evaluations per run (B).")] = 800,
    seeds: Annotated[int, typer.Option(min=1, help="Worlds (seeds 0..N-1), the same for every policy.")] = 30,
    config: Annotated[Path | None, typer.Option(help="Take policy parameters from this run config.")] = None,
    expand_cost: Annotated[
        str,
        typer.Option(help="Expansion prices C to sweep (evaluation units, comma-separated); '' for none."),
    ] = "1,2,4,8",
    expand_cost_from: Annotated[
        Path | None,
        typer.Option(
            help="Also sweep the price measured on this run (mean expansion over mean evaluation wall time)."
        ),
    ] = None,
    priced_policies: Annotated[str, typer.Option(help="Policies of the priced sweep.")] = "hgm,hgm_cost,dgm",
    priced_seeds: Annotated[
        str,
        typer.Option(
            help="Worlds of the priced sweep, FIRST:LAST (default: as many as --seeds from 1000, "
            "disjoint from the seeds hgm_cost's parameters were chosen on, 0:99)."
        ),
    ] = "",
    worlds: Annotated[
        str, typer.Option(help="World families of the priced sweep: project, rugged.")
    ] = "project,rugged",
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Compare search policies on a synthetic world with known ground truth (true final quality), with
    free expansions and then with expansions priced at C evaluation units."""
    import json

    from evolve.bench.search import bench_search

    names = [name.strip() for name in policies.split(",") if name.strip()]
    priced_names = [name.strip() for name in priced_policies.split(",") if name.strip()]
    costs = _costs(expand_cost)
    measured = _measured_price(expand_cost_from) if expand_cost_from is not None else None
    if measured is not None and measured.by_wall_time is not None:
        costs = sorted({*costs, round(max(measured.by_wall_time, 1.0), 2)})
    overrides = _policies_from_config(config) if config is not None else None
    try:
        result = bench_search(
            names,
            budget=budget,
            seeds=seeds,
            policies=overrides,
            expand_costs=costs,
            priced_policies=priced_names,
            priced_seeds=_seed_range(priced_seeds),
            worlds=[w.strip() for w in worlds.split(",") if w.strip()],
        )
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--policies") from exc
    if as_json:
        typer.echo(
            json.dumps({**result.to_json(), **({"measured_price": measured.to_json()} if measured else {})})
        )
        return
    _print_search(result)
    if result.priced is not None:
        _print_priced(result.priced)
    if measured is not None:
        typer.echo(
            f"{expand_cost_from}: {measured.expansions} expansions, {measured.evaluations} evaluations; an "
            f"expansion costs {_times(measured.by_wall_time)} an evaluation by wall time, "
            f"{_times(measured.by_tokens)} by tokens"
        )


def _seed_range(text: str) -> range | None:
    if not text.strip():
        return None
    first, _, last = text.partition(":")
    try:
        return range(int(first), int(last or first) + 1)
    except ValueError:
        raise typer.BadParameter(
            f"{text!r} is not FIRST:LAST (two whole numbers)", param_hint="--priced-seeds"
        ) from None


def _times(ratio: float | None) -> str:
    return "(not measurable)" if ratio is None else f"{ratio:.2f}x"


def _costs(text: str) -> list[float]:
    try:
        costs = [float(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise typer.BadParameter(
            f"{text!r} is not a comma-separated list of numbers", param_hint="--expand-cost"
        ) from None
    if any(cost < 1.0 for cost in costs):
        raise typer.BadParameter(
            "an expansion costs at least one evaluation unit (C >= 1)", param_hint="--expand-cost"
        )
    return costs


def _measured_price(path: Path):
    from evolve.archive.compute import expansion_price
    from evolve.archive.store import Run
    from evolve.errors import EvolveError

    if not (path / "run.sqlite").exists():
        raise typer.BadParameter(f"{path} holds no run (no run.sqlite)", param_hint="--expand-cost-from")
    try:
        run = Run.open(path)
    except EvolveError as exc:
        raise typer.BadParameter(str(exc), param_hint="--expand-cost-from") from exc
    return expansion_price(run.jobs(), run.nodes(), run.evaluations())


def _print_priced(priced) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(
        title=f"priced expansions on the runner's view: {priced.budget} units (an evaluation about 1, an "
        f"expansion about C), worlds {priced.seeds[0]}-{priced.seeds[-1]} (95 % CI)"
    )
    for column in ("world", "C", "policy", "final quality", "units", "nodes", "CMP corr.", "hgm_cost − hgm"):
        table.add_column(column, justify="right")
    for (world, cost), scores in priced.policies.items():
        for name, score in scores.items():
            paired = priced.paired.get((world, cost)) if name == "hgm_cost" else None
            final, corr = score.final_quality, score.cmp_correlation
            table.add_row(
                world,
                f"{cost:g}",
                name,
                f"{final.mean:.3f} [{final.low:.3f}, {final.high:.3f}]",
                f"{score.units:.0f}",
                f"{score.nodes:.1f}",
                f"{corr.mean:.2f}",
                "" if paired is None else f"{paired.mean:+.3f} [{paired.low:+.3f}, {paired.high:+.3f}]",
            )
    console = Console()
    console.print(table)
    console.print(
        "CMP estimators alone on fixed trees (correlation with the true CMP): "
        + ", ".join(
            f"{name} {value.mean:.2f} [{value.low:.2f}, {value.high:.2f}]"
            for name, value in priced.estimators.items()
        )
    )


def _print_search(result) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"search policies: budget {result.budget}, {result.seeds} worlds (95 % CI)")
    for column in ("policy", "final quality", "best node", "evals to match DGM", "nodes", "decisions/s"):
        table.add_column(column, justify="left" if column == "policy" else "right")
    for name, score in result.policies.items():
        final, best = score.final_quality, score.best_quality
        table.add_row(
            name,
            f"{final.mean:.3f} [{final.low:.3f}, {final.high:.3f}]",
            f"{best.mean:.3f} [{best.low:.3f}, {best.high:.3f}]",
            f"{score.evals_to_match_dgm:.0f} ({score.matched_dgm:.0%} reached)",
            f"{score.nodes:.1f}",
            f"{score.decisions_per_s:,.0f}",
        )
    console = Console()
    console.print(table)
    from evolve.bench.search import SELECTION_ONLY

    for name in SELECTION_ONLY.keys() & result.policies.keys():
        console.print(f"{name}: {SELECTION_ONLY[name]}")
    console.print(
        f"the runner's decision at {result.tree_nodes:,} nodes and {result.tree_evaluations:,} evaluations "
        f"(hgm): view build {result.view_ms_10k_nodes:.2f} ms, decision with the view "
        f"{result.decision_ms_10k_nodes:.2f} ms (medians)"
    )


@app.command("engine")
def engine(
    jobs: Annotated[int, typer.Option(min=1, help="Evaluation jobs per concurrency level.")] = 8,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """The engine's overhead per evaluation job (sandbox, copy, grade, record) with an instant agent."""
    import json

    from evolve.bench.engine import bench_engine

    result = bench_engine(jobs=jobs)
    if as_json:
        typer.echo(json.dumps(result.to_json()))
        return
    typer.echo(
        f"overhead per evaluation job: median {result.overhead_median_s:.2f} s, "
        f"p95 {result.overhead_p95_s:.2f} s"
    )
    for level, rate in result.jobs_per_s.items():
        typer.echo(
            f"{level} concurrent: {rate:.2f} jobs/s, median overhead {result.median_by_level[level]:.2f} s"
        )


@app.command("canaries")
def canaries(
    seeds: Annotated[int, typer.Option(min=1, help="Plantings of each hidden file (seeds 0..N-1).")] = 40,
    polyglot: Annotated[
        Path | None,
        typer.Option(
            help="A Polyglot checkout (or fixture) whose C++, Go, Rust, Java and JavaScript test files the "
            "compiled runners' canaries are planted in, too."
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """How often each oracle of a fixed family tells a planted canary from the test it copies, by reading
    the builtin suite's hidden files as the grader plants them (chance: half the pairs); with --polyglot,
    the compiled runners' canaries in that checkout's test files too."""
    import json

    from evolve.errors import EvolveError
    from evolve.tasks import canary_oracles_text
    from evolve.tasks.canary_oracles import bench

    report = bench(seeds)
    if polyglot is not None:
        if not polyglot.is_dir():
            raise EvolveError(f"--polyglot {polyglot}: not a directory")
        found = canary_oracles_text.bench(polyglot, seeds)
        report["modes"]["polyglot"] = {"pairs": found["pairs"], "oracles": found["oracles"]}
        report["polyglot"] = {"files": found["files"], "languages": found["languages"]}
    if as_json:
        typer.echo(json.dumps(report))
        return
    typer.echo(f"{report['files']} hidden files x {seeds} seeds")
    if polyglot is not None:
        languages = ", ".join(report["polyglot"]["languages"])
        typer.echo(f"polyglot: {report['polyglot']['files']} test files of {languages}")
    for mode, found in report["modes"].items():
        typer.echo(f"{mode}: {found['pairs']} canary/twin pairs")
        for row in found["oracles"]:
            typer.echo(
                f"  {row['family']:<6} {row['oracle']:<28} {row['hits']:>5}/{row['pairs']:<5} "
                f"{row['rate']:.1%}  P(as well by chance) {row['p_value']:.3g}  "
                f"two-sided {row['p_two_sided']:.3g}"
            )


@app.command("gateway")
def gateway(
    config: Annotated[
        Path | None, typer.Option(help="Take [budget] job_tokens and [gateway] limits from this run config.")
    ] = None,
    clients: Annotated[int, typer.Option(min=1, help="Connections of the one job sending at once.")] = 16,
    rounds: Annotated[
        int, typer.Option(min=1, help="Times each connection sends every worst-case request.")
    ] = 2,
    job_tokens: Annotated[
        int | None, typer.Option(min=1, help="The job's token budget (default: the config's).")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """The gateway's peak memory and log bytes under one job's concurrent worst-case requests."""
    import json

    from evolve.bench.gateway import MIB, bench_gateway
    from evolve.config import RunConfig, load_config
    from evolve.llm.budget import GatewayLimits

    cfg = load_config(config) if config else RunConfig()
    result = bench_gateway(
        job_tokens or cfg.budget.job_tokens, GatewayLimits.of(cfg.gateway), clients, rounds
    )
    if as_json:
        typer.echo(json.dumps(result.to_json()))
        return
    statuses = ", ".join(f"{status}: {count}" for status, count in sorted(result.statuses.items()))
    typer.echo(
        f"{result.requests} worst-case requests from {result.clients} connections of one job in "
        f"{result.seconds:.1f} s ({statuses})"
    )
    typer.echo(
        f"gateway process RSS: baseline {result.baseline_rss_mib:.0f} MiB, peak {result.peak_rss_mib:.0f} "
        "MiB "
        f"(target under 512 MiB: {'met' if result.peak_rss_mib < 512 else 'MISSED'})"
    )
    typer.echo(
        f"exchange log {result.log_bytes} bytes; the job took in {result.bytes_used} of its "
        f"{result.byte_budget}-byte budget ({result.byte_budget / MIB:.1f} MiB; within it: "
        f"{'yes' if result.bytes_used <= result.byte_budget else 'NO'})"
    )


@app.command("scale")
def scale(
    sleep: Annotated[float, typer.Option(min=0.01, help="Seconds each scripted sleep-job takes.")] = 0.5,
    rounds: Annotated[int, typer.Option(min=1, help="Jobs per slot at each concurrency level.")] = 4,
    ray: Annotated[
        bool,
        typer.Option("--ray/--no-ray", help="Also measure a Ray cluster (extra `distributed`)."),
    ] = True,
    ray_address: Annotated[
        str | None,
        typer.Option(help="Use this Ray cluster instead of starting a local one."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Throughput at 1, 4 and 16 concurrent sleep-jobs: local thread pool and a Ray cluster (head +
    worker)."""
    import json

    from evolve.bench.scale import bench_scale

    result = bench_scale(sleep_s=sleep, rounds=rounds, ray=ray, ray_address=ray_address)
    if as_json:
        typer.echo(json.dumps(result.to_json()))
        return
    for name, levels in (("local", result.local), ("ray", result.ray)):
        if levels is None:
            typer.echo(f"{name:<6} skipped: {result.ray_skipped}")
            continue
        for level, row in levels.items():
            typer.echo(
                f"{name:<6} {level:>3} concurrent: {row.jobs_per_s:7.2f} jobs/s, "
                f"{row.fraction_of_ideal:6.1%} of ideal ({level / result.sleep_s:.1f} jobs/s)"
            )


@app.command("archive")
def archive(
    nodes: Annotated[int, typer.Option(min=1, help="Nodes of the synthetic run.")] = 10_000,
    evaluations: Annotated[int, typer.Option(min=1, help="Evaluations of the synthetic run.")] = 1_000_000,
    keep: Annotated[
        Path | None,
        typer.Option(help="Build the run here and keep it (or reuse the one there); default: a temp dir."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Time the archive's views (frames, load_run, `evolve status`, `evolve tree`) on a synthetic long run."""
    import json
    import tempfile

    from evolve.bench.archive import TARGET_MB, TARGETS_S, bench_archive

    with tempfile.TemporaryDirectory(prefix="evolve-bench-archive-") as tmp:
        result = bench_archive(keep or Path(tmp) / "run", nodes, evaluations)
    if as_json:
        typer.echo(json.dumps(result.to_json()))
        return
    typer.echo(f"{result.nodes} nodes, {result.evaluations} evaluations (built in {result.build_s:.1f} s)")
    frames = result.nodes_frame_s + result.evaluations_frame_s
    cpu = result.cpu_s
    typer.echo(
        f"frames     {frames:7.2f} s, {cpu['nodes_frame'] + cpu['evaluations_frame']:.2f} s CPU (nodes "
        f"{result.nodes_frame_s:.2f} s, evaluations {result.evaluations_frame_s:.2f} s; "
        f"target {TARGETS_S['frames']:.0f} s)"
    )
    typer.echo(
        f"load_run   {result.load_run_s:7.2f} s, {cpu['load_run']:.2f} s CPU (target "
        f"{TARGETS_S['load_run']:.0f} s)"
    )
    for name, timing in (("status", result.status), ("tree", result.tree), ("report", result.report)):
        typer.echo(
            f"{name:<10} {timing.seconds:7.2f} s, {timing.cpu_s:.2f} s CPU, {timing.peak_mb:.0f} MB peak "
            f"(target {TARGETS_S[name]:.0f} s" + (f", {TARGET_MB:.0f} MB)" if name != "report" else ")")
        )


@app.command("selfrepair")
def selfrepair(
    defect: Annotated[
        list[str] | None,
        typer.Option(
            help="Run only this planted defect of the set (repeatable); default: the dev set's five (all but "
            "context-starved and stderr-dropped), every defect of the test set or of --defects."
        ),
    ] = None,
    defect_set: Annotated[
        str,
        typer.Option(
            "--set",
            help="dev: the defects the engine was tuned on; test, test2 to test15: "
            "evolve/bench/defects/test*.toml, each run only while "
            "its SHA-256 is the committed one.",
        ),
    ] = "dev",
    defects: Annotated[
        Path | None,
        typer.Option(
            help="A TOML file of defects (test.toml's form) to plant in --reference, instead of a set."
        ),
    ] = None,
    seed: Annotated[
        Path | None, typer.Option(help="A defective agent directory to evolve (with --reference).")
    ] = None,
    reference: Annotated[
        Path | None, typer.Option(help="The intact agent (default: the bundled seed).")
    ] = None,
    config: Annotated[
        Path | None,
        typer.Option(
            help="The run config of each short evolution (default: evolve/configs/selfrepair.toml)."
        ),
    ] = None,
    archive: Annotated[Path, typer.Option(help="Where the runs are written.")] = Path("archive"),
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Plant known defects in the seed, evolve each defective seed briefly (the real runner), and print the
    fraction of the lost held-out pass rate that evolution recovered, with the code-edit rate and the cost."""
    import json
    import time

    from evolve.bench.selfrepair import SelfRepair, load_defects, render, totals
    from evolve.bench.selfrepair import defect_set as named_set
    from evolve.config import load_config
    from evolve.errors import EvolveError

    if seed is not None and (defect or reference is None or defects is not None):
        raise EvolveError(
            "--seed DIR needs --reference DIR (the intact agent it is measured against), and no "
            "--defect or --defects"
        )
    if defects is not None and defect_set != "dev":
        raise EvolveError("--defects FILE and --set are alternatives: the file's defects are the set")
    catalogue, default = (load_defects(defects), None) if defects is not None else named_set(defect_set)
    default = default or tuple(catalogue)
    config = config or Path(__file__).resolve().parents[1] / "configs" / "selfrepair.toml"
    cfg = load_config(config)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    cfg = cfg.model_copy(update={"run": cfg.run.model_copy(update={"name": f"{cfg.run.name}-{stamp}"})})
    bench = SelfRepair(cfg, archive, progress=lambda line: typer.echo(line, err=as_json))
    started = time.monotonic()
    results = bench.bench(defect, seed=seed, reference=reference, catalogue=catalogue, default=default)
    total = totals(results, time.monotonic() - started)
    if as_json:
        named = str(defects) if defects is not None else defect_set
        typer.echo(
            json.dumps(
                {
                    "config": str(config),
                    "set": named if seed is None else None,
                    "defects": {
                        r.name: {
                            **r.to_json(),
                            "what": catalogue[r.name].what
                            if r.name in catalogue and seed is None
                            else str(seed),
                        }
                        for r in results
                    },
                    "totals": total,
                }
            )
        )
        return
    rate = "none" if total["code_edit_rate"] is None else f"{total['code_edit_rate']:.2f}"
    typer.echo(
        render(results)
        + f"\nrecovered by half or more: {total['recovered_half']} of {total['defects']}; code "
        f"edits {total['code_edits']} of {total['expansions']} expansions ({rate}); "
        f"{total['seconds'] / 60:.1f} min in all, the reference's scoring included"
    )
