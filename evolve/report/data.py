"""What a run report shows, read from a run as a reader (never the writer lock).

Counts come from the one clade tree (`Run.tree`, the search's counting rule) and the best node from
the one rule (`evolve.archive.best`), so the report agrees with `evolve tree`, `evolve status` and
the notebooks.
"""

from __future__ import annotations

import json
import time
from collections.abc import Hashable
from dataclasses import dataclass, field

import numpy as np

from evolve.archive.best import run_best
from evolve.archive.candidates import candidate_stages, candidates_of, render_candidates, render_stages
from evolve.archive.climb import Climb, run_climb
from evolve.archive.compute import run_cpu_hours, sandbox_cpus
from evolve.archive.costcurves import CostCurves, cost_curves
from evolve.archive.edits import code_edit_rate, edit_kinds
from evolve.archive.records import Node
from evolve.archive.stops import recorded_stop
from evolve.archive.store import Run
from evolve.archive.tree import CladeTree
from evolve.config import limit_text
from evolve.notebook.plots import tree_layout
from evolve.report.exchanges import node_exchanges
from evolve.report.headline import headline
from evolve.report.progress import Curves, Row, progress_curves
from evolve.report.usage import Usage, usage_over_time
from evolve.search.estimates import beta_quantile

DETAIL_NODES = 300
"""Nodes whose panel (instructions, diff, outcomes) is embedded in the page: the best lineage first,
then nodes in creation order. A git diff each, and the page stays small on a run of 10,000 nodes;
`evolve show RUN NODE` prints any node."""
DIFF_CHARS = 60_000
"""A longer diff is cut, with a note (the page stays small; `evolve show` prints all of it)."""
INTERVAL = (0.05, 0.95)
"""The credible interval shown for a pass rate: the 5% and 95% quantiles of Beta(1+s, 1+f)."""


@dataclass(frozen=True)
class NodeView:
    """One node as the page shows it."""

    id: str
    parent: str | None
    valid: bool
    reason: str | None
    origin: str
    instructions: str
    own: tuple[int, int]
    clade: tuple[int, int]
    x: float
    depth: int
    on_best_lineage: bool
    outcomes: dict[str, list[str]]
    """Task → outcomes of every attempt, dev and held-out, in recording order."""
    diff: str | None
    """The diff against the parent; None for the root and for a node without details."""
    detailed: bool = True
    """Its instructions, diff and outcomes are in the page's panel data (see `DETAIL_NODES`)."""
    edit: str = "none"
    """The kind of change that made it (evolve.archive.edits: code, prompt, lesson, cosmetic, none)."""
    tokens: int = 0
    cost_usd: float = 0.0
    candidates: list[str] = field(default_factory=list)
    """The candidate children its expansion sampled, one line each with its filter verdict (detailed
    nodes)."""

    @property
    def forged(self) -> int:
        """Its evaluations the grader found forged (the tested code wrote its own verdict): a flagged node."""
        return sum(outcome == "forged" for outcomes in self.outcomes.values() for outcome in outcomes)


@dataclass(frozen=True)
class BestBelief:
    node: str
    successes: int
    failures: int
    quantile: float | None
    """The ε-quantile an HGM policy maximises; None for a policy that reads the mean."""
    interval: tuple[float, float]
    heldout: tuple[int, int] | None
    """Held-out tasks passed and scored, None when the node has no held-out result."""
    rule: str = ""
    """The policy's rule, in words (`evolve.search.policies.best_rule`)."""
    lineage: tuple[str, ...] = ()


@dataclass(frozen=True)
class Overlay:
    """Another run on the same page: its name, its curves and its answer."""

    name: str
    path: str
    curves: Curves
    answer: list[str]


def overlay(run: Run) -> Overlay:
    """What `evolve report RUN_A RUN_B` draws of RUN_B over RUN_A: the curves and the answer."""
    nodes = run.nodes()
    rows: list[Row] = run._rows("SELECT node, task, split, outcome, created FROM evaluations ORDER BY id")
    curves, tree = progress_curves(run, nodes, rows, run.config.policy)
    return Overlay(
        run.config.run.name,
        str(run.path),
        curves,
        headline(run, infer_stop_reason(run, tree, nodes), tree).lines(),
    )


@dataclass(frozen=True)
class ReportData:
    title: str
    run_id: str
    path: str
    generated: float
    config: list[tuple[str, str]]
    budget: list[tuple[str, str]]
    stop_reason: str
    best: BestBelief | None
    nodes: list[NodeView]
    tasks: list[str]
    heldout_tasks: list[str] = field(default_factory=list)
    curves: Curves = field(default_factory=Curves)
    usage: Usage = field(default_factory=Usage)
    import_times: bool = False
    policy: str = "hgm"
    tokens_counted: int = 0
    """Tokens the gateway counted for the run's nodes (the usage chart reads the recorded exchanges)."""
    exchanges: dict[str, dict] = field(default_factory=dict)
    """Per detailed node: its jobs' model exchanges (cut) and log files (`evolve.report.exchanges`)."""
    answer: list[str] = field(default_factory=list)
    """The answer first (`evolve.report.headline`): the lines `evolve run` ends with."""
    overlays: list[Overlay] = field(default_factory=list)
    """Other runs drawn over this one (`evolve report RUN_A RUN_B`)."""
    """The run's policy (its `best` names the final agent)."""
    """The results carry the time of an import from another engine's run directory, not of the run."""
    costs: CostCurves = field(default_factory=CostCurves)
    """The best-so-far against expansions and CPU-hours, scores per generation, cost per improvement."""
    climb: Climb = field(default_factory=Climb)
    """Each node's score by the expansion that made it, the best-so-far, the final lineage (DGM's figure)."""

    def panel_json(self) -> str:
        """The per-node data the page's script shows on a click (safe inside a <script> element)."""
        rows = {
            n.id: {"parent": n.parent, "valid": n.valid, "reason": n.reason, "origin": n.origin,
                   "own": n.own, "clade": n.clade, "best_lineage": n.on_best_lineage, "detailed": n.detailed,
                   "edit": n.edit, "tokens": n.tokens, "cost": n.cost_usd,
                   "forged": n.forged,
                   **({"instructions": n.instructions, "outcomes": n.outcomes, "diff": n.diff,
                       "candidates": n.candidates} if n.detailed else {})}
            for n in self.nodes
        }  # fmt: skip
        return _script_json(rows)

    def exchanges_json(self) -> str:
        """The per-node model exchanges the panel shows (safe inside a <script> element)."""
        return _script_json(self.exchanges)


def _script_json(value: object) -> str:
    return json.dumps(value).replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _interval(successes: int, failures: int) -> tuple[float, float]:
    low, high = (float(beta_quantile(np.array([successes]), np.array([failures]), q)[0]) for q in INTERVAL)
    return low, high


def best_belief(run: Run, tree: CladeTree, heldout: list[Row]) -> BestBelief | None:
    """The run's final agent (`evolve.archive.best`), with its interval and held-out score."""
    best = run_best(run, tree)
    if best is None:
        return None
    first: dict[str, str] = {}
    for node, task, _, outcome, _ in heldout:  # the first attempt per task that is not an infra failure
        if node == best.node and outcome != "infra":
            first.setdefault(task, outcome)
    score = (sum(o == "pass" for o in first.values()), len(first)) if first else None
    policy = run.config.policy
    quantile = None
    if policy.name in ("hgm", "hgm_cost"):
        epsilon = (policy.hgm if policy.name == "hgm" else policy.hgm_cost).epsilon
        quantile = float(beta_quantile(np.array([best.successes]), np.array([best.failures]), epsilon)[0])
    return BestBelief(
        best.node,
        best.successes,
        best.failures,
        quantile,
        _interval(best.successes, best.failures),
        score,
        best.rule,
        best.lineage,
    )


def _lineage(tree: CladeTree, node: Hashable | None) -> set[str]:
    return set() if node is None else {str(node), *(str(a) for a in tree.ancestors(node))}


def _diffs(run: Run, nodes: list[Node], lineage: set[str], limit: int) -> dict[str, str | None]:
    """The diffs of the detailed nodes (None for a root), the best lineage first."""
    order = [n for n in nodes if n.id in lineage] + [n for n in nodes if n.id not in lineage]
    diffs: dict[str, str | None] = {}
    for node in order[:limit]:
        if node.parent is None:
            diffs[node.id] = None
            continue
        text = run.diff(node.id)
        if len(text) > DIFF_CHARS:
            text = (
                text[:DIFF_CHARS] + f"\n... cut at {DIFF_CHARS} characters: `evolve show` prints all of it\n"
            )
        diffs[node.id] = text
    return diffs


def _imported_from(run: Run) -> dict | None:
    try:
        return json.loads(run.meta("imported_from"))
    except KeyError:
        return None  # a run made here, not imported


def _imported_rows(run: Run, source: dict) -> list[tuple[str, str]]:
    """What an import from another engine's run directory knows: no made-up defaults beside it."""
    engine = str(source.get("format", "?")).upper()
    tasks = {e.task for e in run.evaluations()}
    unknown = f"not recorded by the {engine} run directory"
    return [("run", f"{run.config.run.name}: a {engine} run, imported ({len(source.get('ids', {}))} nodes)"),
            ("engine", (f"{engine} (its own selection rule; this report names the best node by evolve's "
                       f"{run.config.policy.name} rule)")),
            ("tasks", f"{len(tasks)} tasks seen in its results"),
            ("models", unknown), ("sandbox", unknown), ("executor", unknown)]  # fmt: skip


def _config_rows(run: Run, source: dict | None) -> list[tuple[str, str]]:
    if source is not None and "bundle" not in source:
        return _imported_rows(run, source)
    config = run.config
    models = {role: getattr(config.models, role).model for role in ("diagnose", "modify", "solve")}
    model_text = ", ".join(f"{role}: {model}" for role, model in models.items())
    heldout_limit = "" if config.tasks.heldout_limit is None else f" (first {config.tasks.heldout_limit})"
    rows = [
        ("run", f"{config.run.name} (seed {config.run.seed})"),
        ("policy", config.policy.name),
        ("tasks", (f"{config.tasks.suite}: search on {config.tasks.split}"
                  f"{'' if config.tasks.ids is None else f' ({len(config.tasks.ids)} named)'}"
                  f"{'' if config.tasks.limit is None else f' (first {config.tasks.limit})'}, held out "
                  f"{config.tasks.heldout_split}{heldout_limit}")),
        ("models", model_text),
        ("sandbox", (f"{config.sandbox.backend}, {config.sandbox.cpus:g} CPU, {config.sandbox.memory}, "
                    f"{config.sandbox.timeout_s:g} s per job")),
        ("executor", f"{config.executor.kind}, {config.executor.concurrency} jobs in flight"),
    ]  # fmt: skip
    if source is None:
        return rows
    if "bundle" in source:
        rows.append(("imported from", f"bundle {source['bundle']} (run {source.get('run_id', '?')})"))
    else:
        rows.append(
            (
                "imported from",
                f"a {source.get('format', '?')} run directory ({len(source.get('ids', {}))} nodes)",
            )
        )
    return rows


def _budget_rows(
    run: Run, tree: CladeTree, nodes: list[Node], tokens: int, dollars: float
) -> list[tuple[str, str]]:
    budget = run.config.budget
    expansions = len(nodes) - len(tree.roots)
    source = _imported_from(run)
    if source is not None and "bundle" not in source:  # another engine's run: its budget is not known
        return [
            ("evaluations", f"{tree.results} counted (its budget is not recorded)"),
            ("expansions", str(expansions)),
            ("tokens", "not recorded"),
            ("dollars", "not recorded"),
        ]
    rows = [
        ("evaluations", f"{tree.results} of {budget.evaluations}"),
        ("expansions", f"{expansions}" + ("" if budget.expansions is None else f" of {budget.expansions}")),
        ("tokens", f"{tokens:,}" + ("" if budget.tokens is None else f" of {budget.tokens:,}")),
        ("dollars", f"${dollars:.4f}" + ("" if budget.dollars is None else f" of ${budget.dollars:.2f}")),
    ]
    if budget.cpu_hours is not None:
        rows.append(("CPU-hours", f"{run_cpu_hours(run, sandbox_cpus(run)):.2f} of {budget.cpu_hours:g}"))
    for change in run.budget_changes():  # made on a resume (`evolve run --resume RUN --budget NAME=VALUE`)
        when = time.strftime("%Y-%m-%d %H:%M", time.gmtime(change["time"]))
        rows.append(
            (
                "changed " + when,
                ", ".join(
                    f"{name} {limit_text(old)} → {limit_text(new)}"
                    for name, (old, new) in change["changes"].items()
                ),
            )
        )
    rate = code_edit_rate(run)  # valid children with a code edit / expansions (evolve.archive.edits)
    rows.append(("code edits", "not counted (a long run)" if rate is None else f"{rate} of expansions"))
    expansions, stages = candidate_stages(run)
    if expansions:
        rows.append(("candidates", render_stages(expansions, stages)))
    return rows


def infer_stop_reason(run: Run, tree: CladeTree, nodes: list[Node]) -> str:
    """Why the run stopped: as the runner recorded it when it stopped; for a run without that record,
    as far as the archive shows."""
    recorded = recorded_stop(run)
    if recorded is not None:
        return recorded
    in_flight = [job for job in run.jobs() if job.state == "started"]
    if in_flight:
        return f"running, or stopped without finishing: {len(in_flight)} job(s) in flight"
    budget = run.config.budget
    if tree.results >= budget.evaluations:
        return f"evaluation budget spent ({tree.results}/{budget.evaluations})"
    source = _imported_from(run)
    if source is not None:
        return f"imported ({source.get('format', 'bundle')}): the original run's stop reason is not recorded"
    if budget.expansions is not None and len(nodes) - len(tree.roots) >= budget.expansions:
        return f"expansion budget spent ({budget.expansions}); no evaluation left to run"
    return f"not recorded ({tree.results}/{budget.evaluations} evaluations used)"


def collect(run: Run, *, stop_reason: str | None = None, detail_nodes: int = DETAIL_NODES) -> ReportData:
    """Everything the page shows. The nodes and evaluations are read once, and the tree, the curves, the
    best belief and the grid all come from those rows (a live run's later rows wait for the next page)."""
    nodes = run.nodes()
    # Plain rows, not records: a long run's million evaluations are read once, as tuples.
    rows: list[Row] = run._rows("SELECT node, task, split, outcome, created FROM evaluations ORDER BY id")
    curves, tree = progress_curves(run, nodes, rows, run.config.policy)  # = run.tree(), built once
    heldout = [row for row in rows if row[2] != "dev"]
    best = best_belief(run, tree, heldout)
    lineage = _lineage(tree, None if best is None else best.node)
    diffs = _diffs(run, nodes, lineage, detail_nodes)
    outcomes: dict[str, dict[str, list[str]]] = {}
    for node_id, task, _, outcome, _ in rows:
        outcomes.setdefault(node_id, {}).setdefault(task, []).append(outcome)
    positions = tree_layout(tree)
    kinds = edit_kinds(run, nodes)
    candidates = candidates_of(run, list(diffs))
    views = []
    for node in nodes:
        own, clade = tree.own_counts(node.id), tree.clade_counts(node.id)
        x, y = positions[node.id]
        views.append(NodeView(
            node.id, node.parent, node.valid, node.reason, node.origin, node.instructions or "",
            (own.successes, own.failures), (clade.successes, clade.failures), x, int(-y), node.id in lineage,
            outcomes.get(node.id, {}), diffs.get(node.id), node.id in diffs, str(kinds[node.id]), node.tokens,
            node.cost_usd, [line.strip() for line in render_candidates(candidates.get(node.id, []))],
        ))  # fmt: skip
    dev_tasks = list(dict.fromkeys(row[1] for row in rows if row[2] == "dev"))
    dev_set = set(dev_tasks)
    heldout_tasks = list(dict.fromkeys(row[1] for row in heldout if row[1] not in dev_set))
    usage = usage_over_time(run, run.jobs())
    tokens, dollars = run.usage_totals()
    source = _imported_from(run)
    stop = stop_reason or infer_stop_reason(run, tree, nodes)
    return ReportData(
        title=f"evolve run {run.config.run.name}",
        run_id=run.id,
        path=str(run.path),
        generated=time.time(),
        config=_config_rows(run, source),
        budget=_budget_rows(run, tree, nodes, tokens, dollars),
        stop_reason=stop,
        best=best,
        nodes=views,
        tasks=dev_tasks + heldout_tasks,
        heldout_tasks=heldout_tasks,
        curves=curves,
        usage=usage,
        import_times=source is not None and "bundle" not in source,
        policy=run.config.policy.name,
        tokens_counted=tokens,
        answer=headline(run, stop, tree).lines(),
        exchanges=node_exchanges(run, diffs),
        costs=cost_curves(run, curves.min_results),
        climb=run_climb(run),
    )
