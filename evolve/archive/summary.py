"""Plain-data and plain-text summaries of a run, for the CLI and for tests."""

from __future__ import annotations

from collections import Counter

from evolve.archive.compute import run_cpu_hours, sandbox_cpus
from evolve.archive.records import Node
from evolve.archive.store import Run
from evolve.archive.tree import CladeTree, Counts
from evolve.archive.vocab import JobState, Outcome


def _rate(counts: Counts) -> str:
    return f"{counts.successes}/{counts.total}" + (f" ({counts.mean:.2f})" if counts.total else "")


def run_summary(run: Run) -> dict:
    """Counts of nodes, evaluations and jobs, usage totals, and the best node by own pass rate."""
    nodes = run.nodes()
    evaluations = run.evaluations()
    jobs = run.jobs()
    tree = run.tree()  # the search's rule: its split, its tasks, one result per node and task
    outcomes = Counter(e.outcome for e in evaluations)
    states = Counter(j.state for j in jobs)
    evaluated = [n for n in nodes if tree.own_counts(n.id).total]
    best = max(evaluated, key=lambda n: (tree.own_counts(n.id).mean, tree.own_counts(n.id).total), default=None)
    return {
        "run_id": run.id,
        "name": run.meta("name"),
        "path": str(run.path),
        "nodes": {
            "total": len(nodes),
            "valid": sum(n.valid for n in nodes),
            "invalid": sum(not n.valid for n in nodes),
        },
        "evaluations": {"total": len(evaluations), **{o.value: outcomes.get(o, 0) for o in Outcome}},
        "jobs": {"total": len(jobs), **{s.value: states.get(s, 0) for s in JobState}},
        "tokens": sum(n.tokens for n in nodes),
        "cost_usd": round(sum(n.cost_usd for n in nodes), 6),
        "cpu_hours": round(run_cpu_hours(run, sandbox_cpus(run)), 4),
        "best_node": None
        if best is None
        else {"id": best.id, "passed": tree.own_counts(best.id).successes, "evaluated": tree.own_counts(best.id).total},
    }


def render_summary(summary: dict) -> str:
    e, n, j = summary["evaluations"], summary["nodes"], summary["jobs"]
    best = summary["best_node"]
    lines = [
        f"run {summary['name']} ({summary['run_id']}) at {summary['path']}",
        f"nodes: {n['total']} ({n['valid']} valid, {n['invalid']} invalid)",
        "evaluations: " + f"{e['total']} (" + ", ".join(f"{o} {e[o]}" for o in Outcome) + ")",
        "jobs: " + f"{j['total']} (" + ", ".join(f"{s} {j[s]}" for s in JobState) + ")",
        f"usage: {summary['tokens']} tokens, ${summary['cost_usd']:.4f}, {summary['cpu_hours']:.2f} CPU-hours",
        "best node by pass rate: "
        + ("none evaluated yet" if best is None else f"{best['id']} ({best['passed']}/{best['evaluated']})"),
    ]
    return "\n".join(lines)


def render_tree(nodes: list[Node], tree: CladeTree) -> str:
    """An indented tree: per node its own pass count and its clade estimate S/(S+F)."""
    by_id = {node.id: node for node in nodes}
    lines: list[str] = []

    def walk(node_id: str, prefix: str, last: bool, top: bool) -> None:
        node = by_id[node_id]
        branch = "" if top else ("└── " if last else "├── ")
        mark = "" if node.valid else f"  [invalid: {node.reason or 'no reason recorded'}]"
        lines.append(
            f"{prefix}{branch}{node_id}  own {_rate(tree.own_counts(node_id))}"
            f"  clade {_rate(tree.clade_counts(node_id))}{mark}"
        )
        children = tree.children(node_id)
        child_prefix = prefix if top else prefix + ("    " if last else "│   ")
        for index, child in enumerate(children):
            walk(str(child), child_prefix, index == len(children) - 1, False)

    for root in tree.roots:
        walk(str(root), "", True, True)
    return "\n".join(lines)


def render_node(run: Run, node_id: str) -> str:
    """A node's record, its own and clade counts, children, and per-task outcomes."""
    node = run.node(node_id)
    tree = run.tree()
    per_task: dict[str, list[str]] = {}
    for evaluation in run.evaluations(node_id):
        per_task.setdefault(evaluation.task, []).append(evaluation.outcome)
    lines = [
        f"node {node.id}  ({node.status}{': ' + node.reason if node.reason else ''})",
        f"parent: {node.parent or '-'}   origin: {node.origin}   commit: {node.commit}",
        f"children: {', '.join(map(str, tree.children(node.id))) or '-'}",
        f"own: {_rate(tree.own_counts(node.id))}   clade: {_rate(tree.clade_counts(node.id))}",
        f"usage: {node.tokens} tokens, ${node.cost_usd:.4f}",
    ]
    if node.instructions:
        lines += ["instructions:", *("  " + line for line in node.instructions.splitlines())]
    if per_task:
        lines.append("evaluations:")
        lines += [f"  {task}: {' '.join(outcomes)}" for task, outcomes in sorted(per_task.items())]
    return "\n".join(lines)
