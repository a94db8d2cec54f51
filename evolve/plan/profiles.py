"""What one evaluation and one expansion use: measured from earlier runs, else a documented default.

Measured: from the engine's own rows, never from agent output. An evaluation's tokens are its row's
(the gateway's count); an expansion's are the node totals less the evaluation tokens (the gateway
charges both to nodes, `evolve.archive.compute.expansion_tokens`), over the expansion jobs that ran.
How those totals divide into roles and into input and output comes from the gateway's recorded
exchanges when the run has them (an exported bundle keeps only its evaluations'), else from the
suite's default. Wall times are the job rows' (start to end, cancelled jobs left out, as the
CPU-hour budget counts them).

The defaults, to be replaced by a measured run as soon as there is one:
- a suite and solving model with published runs: their figures (evolve.plan.published; HumanEval on
  the embedded 0.5B model: 2,076 tokens and 0.71 min per evaluation, 17,638 and 2.45 min per expansion);
  builtin and directory suites take HumanEval's on the embedded model.
- the first quickstart bundle alone (kept as the last fallback): 1,483 input and 307 output tokens per
  evaluation, 4,498 per expansion, 0.88 and 3.1 minutes (its expansions were lessons of one sentence).
- `swebench-*`: an agent on a SWE-bench instance re-sends a growing history of a large repository for
  tens of turns; 900k input and 15k output tokens per evaluation makes the DGM SWE-bench config
  (evolve/configs/dgm-swebench.toml) plan about the $22k DGM reported for that run (arXiv
  2505.22954); 35 minutes per evaluation makes HGM's SWE-Verified-60 config plan about the 517
  CPU-hours HGM reported (arXiv 2510.21614).
- `polyglot`: one exercise is a much smaller repository and fewer turns: 150k input and 10k output
  tokens, 8 minutes per evaluation.
An expansion's validation solves the smoke task (small), its diagnosis reads failures and the agent's
code, its modification is an agent run on the agent's own code.
"""

from __future__ import annotations

import json
import statistics
import tempfile
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from evolve.archive.vocab import JobKind, JobState
from evolve.config import RunConfig
from evolve.errors import EvolveError
from evolve.llm.types import ROLES, Role
from evolve.plan.types import JobProfile, RoleTokens, Tokens

EMBEDDED_MODEL = "qwen2.5-coder-0.5b-instruct"
_QUICKSTART = JobProfile(
    evaluation=RoleTokens(solve=Tokens(1_483, 307)),
    expansion=RoleTokens(diagnose=Tokens(800, 200), modify=Tokens(2_700, 500), solve=Tokens(250, 48)),
    evaluation_minutes=0.88,
    expansion_minutes=3.1,
    source="default (the published quickstart bundle)",
)

DEFAULTS: dict[str, JobProfile] = {
    "swebench": JobProfile(
        evaluation=RoleTokens(solve=Tokens(900_000, 15_000)),
        expansion=RoleTokens(
            diagnose=Tokens(60_000, 6_000), modify=Tokens(800_000, 25_000), solve=Tokens(20_000, 2_000)
        ),
        evaluation_minutes=35.0,
        expansion_minutes=60.0,
        source="default for SWE-bench",
    ),
    "polyglot": JobProfile(
        evaluation=RoleTokens(solve=Tokens(150_000, 10_000)),
        expansion=RoleTokens(
            diagnose=Tokens(40_000, 6_000), modify=Tokens(400_000, 20_000), solve=Tokens(20_000, 2_000)
        ),
        evaluation_minutes=8.0,
        expansion_minutes=30.0,
        source="default for polyglot",
    ),
}


def suite_family(suite: str) -> str:
    """`swebench`, `polyglot`, or the suite's own name (`humaneval`, `builtin`, a directory)."""
    base = suite.partition(":")[0]
    return "swebench" if base.startswith("swebench-") else base


def default_profile(suite: str, model: str | None = None) -> JobProfile:
    """The published runs' figures for this suite and solving model (evolve.plan.published), else the
    suite family's default, else HumanEval's on the embedded model."""
    from evolve.plan.published import calibrated

    family = suite_family(suite)
    found = calibrated(family, model) if model is not None else None
    return found or DEFAULTS.get(family) or calibrated("humaneval", EMBEDDED_MODEL) or _QUICKSTART


def _split(total: float, shares: RoleTokens, roles: Sequence[Role]) -> RoleTokens:
    """`total` tokens divided over `roles` and input/output in the proportions of `shares`."""
    whole = sum(shares.of(r).total for r in roles)
    if whole <= 0:
        return RoleTokens()
    return RoleTokens(**{r: shares.of(r).times(total / whole) for r in roles})


SHARE_FILES = 200
"""Job record files read per run for the role and input/output shares: they are only proportions, and
every record of a long run (whole requests) would take minutes to read."""


def _spread(paths: list[Path], most: int) -> list[Path]:
    """At most `most` of `paths`, evenly spread over them (all when there are fewer)."""
    if len(paths) <= most:
        return paths
    return [paths[i * len(paths) // most] for i in range(most)]


def _recorded(run_path: Path, kinds: dict[str, JobKind]) -> dict[JobKind, RoleTokens]:
    """Tokens by job kind and role from the gateway's exchange records (`exchanges/job-<id>[-step].jsonl`)."""
    sums: dict[JobKind, dict[Role, Tokens]] = defaultdict(lambda: {r: Tokens() for r in ROLES})
    for path in _spread(sorted((run_path / "exchanges").glob("job-*.jsonl")), SHARE_FILES):
        for line in path.read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            record = json.loads(line)
            kind = kinds.get(str(record["job_id"]).split("-", 1)[0])
            role = record["role"]
            if kind is None or role not in ROLES:
                continue  # a job the rows do not know (a bench's gateway test): not this run's work
            usage = record["response"].get("usage") or {}
            sums[kind][role] = sums[kind][role].plus(
                Tokens(usage.get("prompt_tokens", 0), usage.get("completion_tokens", 0))
            )
    return {kind: RoleTokens(**roles) for kind, roles in sums.items()}


@dataclass(frozen=True)
class RunUsage:
    """What one earlier run's jobs used, from its rows and the gateway's records."""

    path: Path
    evaluations: int
    evaluation_tokens: float
    expansion_tokens: float
    seconds: Mapping[JobKind, tuple[float, ...]]
    """Wall seconds of each ended (not cancelled) job, by kind."""
    recorded: Mapping[JobKind, RoleTokens]


def run_usage(path: Path) -> RunUsage:
    """The usage of the run at `path`; a run that cannot be read is one `EvolveError` line."""
    from evolve.archive import Run
    from evolve.archive.compute import expansion_tokens

    try:
        with Run.open(path) as run:
            evaluations, nodes, jobs = run.evaluations(), run.nodes(), run.jobs()
        recorded = _recorded(path, {str(j.id): j.kind for j in jobs})
    except (EvolveError, OSError, ValueError, KeyError) as exc:
        raise EvolveError(f"cannot measure tokens from {path}: {exc}") from None
    ended = [j for j in jobs if j.finished is not None and j.state != JobState.CANCELLED]
    seconds = {
        kind: tuple(j.finished - j.started for j in ended if j.kind == kind)  # type: ignore[operator]
        for kind in JobKind
    }
    return RunUsage(
        path,
        len(evaluations),
        float(sum(e.tokens for e in evaluations)),
        float(expansion_tokens(nodes, evaluations)),
        seconds,
        recorded,
    )


def _sum_roles(parts: Sequence[RoleTokens]) -> RoleTokens:
    return RoleTokens(
        *(Tokens(sum(p.of(r).input for p in parts), sum(p.of(r).output for p in parts)) for r in ROLES)
    )


def measured_profile(usages: Sequence[RunUsage], fallback: JobProfile) -> JobProfile | None:
    """The mean job over `usages`, or None when they hold no evaluation. Where the runs recorded no
    exchanges of a kind of job, its role and input/output split is `fallback`'s."""
    evaluations = sum(u.evaluations for u in usages)
    if not evaluations:
        return None
    eval_seconds = [s for u in usages for s in u.seconds[JobKind.EVALUATE]]
    expand_seconds = [s for u in usages for s in u.seconds[JobKind.EXPAND]]
    eval_shares = _sum_roles([u.recorded.get(JobKind.EVALUATE, RoleTokens()) for u in usages])
    expand_shares = _sum_roles([u.recorded.get(JobKind.EXPAND, RoleTokens()) for u in usages])
    expansion = fallback.expansion
    if expand_seconds:
        expansion = _split(
            sum(u.expansion_tokens for u in usages) / len(expand_seconds),
            expand_shares if expand_shares.total else fallback.expansion,
            ROLES,
        )
    return JobProfile(
        evaluation=_split(
            sum(u.evaluation_tokens for u in usages) / evaluations,
            eval_shares if eval_shares.total else fallback.evaluation,
            ("solve",),
        ),
        expansion=expansion,
        evaluation_minutes=statistics.fmean(eval_seconds) / 60
        if eval_seconds
        else fallback.evaluation_minutes,
        expansion_minutes=statistics.fmean(expand_seconds) / 60
        if expand_seconds
        else fallback.expansion_minutes,
        source=f"measured: {', '.join(str(u.path) for u in usages)} ({evaluations} evaluations, "
        f"{len(expand_seconds)} expansions)",
    )


EARLIER_RUNS = 3
"""The newest matching runs measured (their exchange records can be large)."""


def earlier_runs(config: RunConfig) -> list[Path]:
    """The newest runs under the config's archive_dir on the same suite family with the same solving
    model: their jobs are the best guess of this run's."""
    from evolve.config import load_config

    root = config.run.archive_dir
    if not root.is_dir():
        return []
    runs = [p for p in root.iterdir() if (p / "run.sqlite").is_file() and (p / "run.toml").is_file()]
    found = []
    for path in sorted(runs, key=lambda p: (p / "run.sqlite").stat().st_mtime, reverse=True):
        try:
            other = load_config(path / "run.toml")
        except EvolveError:
            continue  # a run.toml this evolve cannot read: not a run to measure from
        same_suite = suite_family(other.tasks.suite) == suite_family(config.tasks.suite)
        if same_suite and other.models.solve.model == config.models.solve.model:
            found.append(path)
        if len(found) == EARLIER_RUNS:
            break
    return found


def job_profile(config: RunConfig, measured_from: Sequence[Path] | None = None) -> JobProfile:
    """From `measured_from` when given (each must be readable), else from the newest earlier runs in the
    archive that can be read, else the suite default."""
    fallback = default_profile(config.tasks.suite, config.models.solve.model)
    if measured_from:
        measured = measured_profile([run_usage(path) for path in measured_from], fallback)
        if measured is None:
            raise EvolveError(f"no evaluations to measure in {', '.join(map(str, measured_from))}")
        return measured
    usages = []
    for path in earlier_runs(config):
        try:
            usages.append(run_usage(path))
        except EvolveError:
            continue  # a damaged or foreign run is no measurement; the others (or the default) are
    return measured_profile(usages, fallback) or fallback


def measure_bundles(bundles: Sequence[Path], fallback: JobProfile) -> JobProfile | None:
    """The mean job over published bundles, each imported into a scratch directory and measured as a run."""
    from evolve.archive.lineage import import_bundle

    with tempfile.TemporaryDirectory(prefix="evolve-calibrate-") as scratch:
        usages = []
        for bundle in bundles:
            dest = Path(scratch) / bundle.name.split(".")[0]
            import_bundle(bundle, dest).close()
            usages.append(run_usage(dest))
        return measured_profile(usages, fallback)
