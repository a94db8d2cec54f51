"""Plain-data and plain-text summaries of a run, for the CLI and for tests."""

from __future__ import annotations

from collections import Counter

from evolve.archive.best import Best, run_best
from evolve.archive.candidates import node_candidates, render_candidates
from evolve.archive.compute import run_cpu_hours, sandbox_cpus
from evolve.archive.edits import edit_kind
from evolve.archive.records import Node
from evolve.archive.store import Run
from evolve.archive.tree import CladeTree, Counts
from evolve.archive.vocab import JobKind, JobState, NodeStatus, Outcome, Split, parse


def _rate(counts: Counts) -> str:
    return f"{counts.successes}/{counts.total}" + (f" ({counts.mean:.2f})" if counts.total else "")


def run_summary(run: Run) -> dict:
    """Counts of nodes, evaluations and jobs, usage totals, and the final agent (`evolve.archive.best`).

    All in SQL (counts and the search's own counts per node, `evolve.archive.counts`): a long run's
    million results are never read into Python one by one. One snapshot: a live run's figures agree."""
    with run.snapshot():
        return _summary(run)


def _summary(run: Run) -> dict:
    nodes = run._query("SELECT id, status, tokens, cost_usd FROM nodes ORDER BY rowid")
    valid = sum(parse(NodeStatus, row["status"], "nodes.status") == NodeStatus.VALID for row in nodes)
    outcomes: Counter[Outcome] = Counter()
    for outcome, split, n in run._query(
        "SELECT outcome, split, COUNT(*) FROM evaluations GROUP BY outcome, split"
    ):
        # a value this evolve does not know is refused, not miscounted
        parse(Split, split, "evaluations.split")
        outcomes[parse(Outcome, outcome, "evaluations.outcome")] += n
    states: Counter[JobState] = Counter()
    for state, kind, n in run._query("SELECT state, kind, COUNT(*) FROM jobs GROUP BY state, kind"):
        parse(JobKind, kind, "jobs.kind")
        states[parse(JobState, state, "jobs.state")] += n
    best = run_best(run)
    flagged = [
        row[0]
        for row in run._query(
            "SELECT DISTINCT node FROM evaluations WHERE outcome = ? ORDER BY node", (Outcome.FORGED.value,)
        )
    ]
    return {
        "run_id": run.id,
        "name": run.meta("name"),
        "path": str(run.path),
        "nodes": {"total": len(nodes), "valid": valid, "invalid": len(nodes) - valid},
        "evaluations": {"total": sum(outcomes.values()), **{o.value: outcomes.get(o, 0) for o in Outcome}},
        "jobs": {"total": sum(states.values()), **{s.value: states.get(s, 0) for s in JobState}},
        "tokens": sum(row["tokens"] for row in nodes),
        "cost_usd": round(sum(row["cost_usd"] for row in nodes), 6),
        "cpu_hours": round(run_cpu_hours(run, sandbox_cpus(run)), 4),
        "best_node": None
        if best is None
        else {
            "id": best.node,
            "passed": best.successes,
            "evaluated": best.total,
            "lineage": list(best.lineage),
            "rule": best.rule,
        },
        "flagged": flagged,
    }


def render_summary(summary: dict) -> str:
    e, n, j = summary["evaluations"], summary["nodes"], summary["jobs"]
    best = summary["best_node"]
    lines = [
        f"run {summary['name']} ({summary['run_id']}) at {summary['path']}",
        f"nodes: {n['total']} ({n['valid']} valid, {n['invalid']} invalid)",
        "evaluations: " + f"{e['total']} (" + ", ".join(f"{o} {e[o]}" for o in Outcome) + ")",
        "jobs: " + f"{j['total']} (" + ", ".join(f"{s} {j[s]}" for s in JobState) + ")",
        (
            f"usage: {summary['tokens']} tokens, ${summary['cost_usd']:.4f}, {summary['cpu_hours']:.2f} "
            "CPU-hours"
        ),
        "best node: "
        + (
            "none (no valid node)"
            if best is None
            else (
                f"{best['id']} ({best['passed']}/{best['evaluated']} dev), lineage "
                f"{' → '.join(best['lineage'])}"
            )
        ),
    ]
    if best is not None:
        lines.append(f"  rule: {best['rule']}")
    if summary.get("flagged"):
        lines.append(
            f"FLAGGED (a forged verdict: the tested code wrote its own): {', '.join(summary['flagged'])}"
        )
    return "\n".join(lines)


def render_tree(nodes: list[Node], tree: CladeTree, best: Best | None = None) -> str:
    """An indented tree: per node its own pass count and its clade estimate S/(S+F); with `best`, the
    final agent marked `★ best` and its ancestors `· best lineage`, and the rule in a last line."""
    by_id = {node.id: node for node in nodes}
    lineage = set() if best is None else set(best.lineage)
    lines: list[str] = []

    # A stack, not recursion: a lineage can be thousands of nodes deep.
    stack: list[tuple[str, str, bool, bool]] = [(str(root), "", True, True) for root in reversed(tree.roots)]
    while stack:
        node_id, prefix, last, top = stack.pop()
        node = by_id[node_id]
        branch = "" if top else ("└── " if last else "├── ")
        mark = "" if node.valid else f"  [invalid: {_one_line(node.reason or 'no reason recorded')}]"
        if best is not None and node_id in lineage:
            mark += "  ★ best" if node_id == best.node else "  · best lineage"
        lines.append(
            f"{prefix}{branch}{node_id}  own {_rate(tree.own_counts(node_id))}"
            f"  clade {_rate(tree.clade_counts(node_id))}{mark}"
        )
        children = tree.children(node_id)
        child_prefix = prefix if top else prefix + ("    " if last else "│   ")
        for index in reversed(range(len(children))):
            stack.append((str(children[index]), child_prefix, index == len(children) - 1, False))
    if best is not None:
        lines.append(f"★ {best.rule}")
    return "\n".join(lines)


TREE_REASON_CHARS = 100
"""An invalid node's reason in the tree: its first line, cut here (`evolve show` prints it whole)."""


def _one_line(reason: str) -> str:
    first = reason.strip().splitlines()[0] if reason.strip() else reason
    cut = len(first) > TREE_REASON_CHARS or first != reason.strip()
    return (first[:TREE_REASON_CHARS].rstrip(" .") + " ... (evolve show NODE)") if cut else first


def render_node(run: Run, node_id: str) -> str:
    """A node's record, its own and clade counts, children, and per-task outcomes."""
    node = run.node(node_id)
    tree = run.tree(with_tasks=False)
    best = run_best(run, tree)
    role = (
        "-"
        if best is None or node.id not in best.lineage
        else (
            "the final agent (best)"
            if node.id == best.node
            else f"on the best lineage (best: node {best.node})"
        )
    )
    per_task: dict[str, list[str]] = {}
    for evaluation in run.evaluations(node_id):
        per_task.setdefault(evaluation.task, []).append(evaluation.outcome)
    forged = sum(outcome == Outcome.FORGED for outcomes in per_task.values() for outcome in outcomes)
    lines = [
        f"node {node.id}  ({node.status}{': ' + node.reason if node.reason else ''})"
        + (f"  FLAGGED: {forged} forged verdict(s)" if forged else ""),
        (
            f"parent: {node.parent or '-'}   origin: {node.origin}   commit: {node.commit}   edit: "
            f"{edit_kind(run, node.id)}"
        ),
        f"children: {', '.join(map(str, tree.children(node.id))) or '-'}",
        f"own: {_rate(tree.own_counts(node.id))}   clade: {_rate(tree.clade_counts(node.id))}",
        f"usage: {node.tokens} tokens, ${node.cost_usd:.4f}",
        f"best: {role}",
    ]
    if node.instructions:
        lines += ["instructions:", *("  " + line for line in node.instructions.splitlines())]
    if candidates := node_candidates(run, node.id):
        lines += [f"candidates ({len(candidates)}):", *render_candidates(candidates)]
    if per_task:
        lines.append("evaluations:")
        lines += [f"  {task}: {' '.join(outcomes)}" for task, outcomes in sorted(per_task.items())]
    return "\n".join(lines)
