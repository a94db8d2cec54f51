"""matplotlib plots of a loaded run: the clade tree, progress curves, outcomes, usage.

Each function takes a `LoadedRun` and an optional `Axes` and returns the `Axes` it drew on.
matplotlib is imported inside the functions, so importing this module stays cheap.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from evolve.archive.tree import CladeTree, build_tree, count_result, recorded_tasks
from evolve.notebook.labels import short_labels

if TYPE_CHECKING:
    from matplotlib.axes import Axes

    from evolve.notebook import LoadedRun


def _axes(ax: Axes | None, size: tuple[float, float]) -> Axes:
    if ax is not None:
        return ax
    import matplotlib.pyplot as plt

    return plt.subplots(figsize=size)[1]


def tree_layout(clade: CladeTree) -> dict[Hashable, tuple[float, float]]:
    """Leaves spread evenly on x in depth-first order, each parent centred over its children; y = -depth.
    Iterative (post-order), so a chain thousands of nodes deep is laid out too."""
    positions: dict[Hashable, tuple[float, float]] = {}
    next_leaf = 0.0
    for root in clade.roots:
        stack: list[tuple[Hashable, int, bool]] = [(root, 0, False)]
        while stack:
            node, depth, children_done = stack.pop()
            children = clade.children(node)
            if children and not children_done:
                stack.append((node, depth, True))
                stack.extend((child, depth + 1, False) for child in reversed(children))
                continue
            if children:
                x = float(np.mean([positions[child][0] for child in children]))
            else:
                x, next_leaf = next_leaf, next_leaf + 1.0
            positions[node] = (x, -float(depth))
    return positions


def plot_tree(run: LoadedRun, ax: Axes | None = None, labels: bool | None = None) -> Axes:
    """The clade tree: colour = own pass rate (grey: not evaluated), size = evaluations,
    invalid nodes as red crosses, the best-belief node ringed in gold."""
    import matplotlib.pyplot as plt

    ax = _axes(ax, (10, 6))
    positions = tree_layout(run.clade)
    for parent, child in run.tree.edges:
        (x0, y0), (x1, y1) = positions[parent], positions[child]
        ax.plot([x0, x1], [y0, y1], color="0.7", linewidth=1, zorder=1)
    nodes = run.nodes
    evaluated = nodes["successes"] + nodes["failures"]
    valid = nodes[nodes["status"] == "valid"]
    xy = np.array([positions[n] for n in valid.index]).reshape(-1, 2)
    rates = valid["pass_rate"].to_numpy(dtype=float)
    sizes = 40 + 25 * evaluated[valid.index].to_numpy(dtype=float)
    cmap = plt.get_cmap("viridis").with_extremes(bad="lightgrey")
    points = ax.scatter(
        xy[:, 0],
        xy[:, 1],
        c=np.ma.masked_invalid(rates),
        cmap=cmap,
        vmin=0,
        vmax=1,
        s=sizes,
        edgecolors="black",
        linewidths=0.5,
        zorder=2,
    )
    invalid = [positions[n] for n in nodes.index[nodes["status"] != "valid"]]
    if invalid:
        ix = np.array(invalid)
        ax.scatter(ix[:, 0], ix[:, 1], marker="x", color="red", s=60, zorder=3, label="invalid")
    if run.best is not None:
        bx, by = positions[run.best]
        ax.scatter(
            [bx],
            [by],
            s=400,
            facecolors="none",
            edgecolors="gold",
            linewidths=2.5,
            zorder=4,
            label=f"best belief ({run.best})",
        )
    if labels if labels is not None else len(nodes) <= 40:
        short = short_labels(str(node) for node in positions)
        for node, (x, y) in positions.items():
            ax.annotate(short[str(node)], (x, y), textcoords="offset points", xytext=(0, 9), ha="center",
                        fontsize=7, rotation=20)  # fmt: skip
    ax.figure.colorbar(points, ax=ax, label="own pass rate")
    ax.set_ylabel("depth")
    ax.set_yticks(sorted({y for _, y in positions.values()}))
    ax.set_yticklabels([str(int(-y)) for y in sorted({y for _, y in positions.values()})])
    ax.set_xticks([])
    ax.margins(x=0.08, y=0.15)  # room for the labels above the top and outer nodes
    ax.set_title(f"clade tree: {len(nodes)} nodes, {int(evaluated.sum())} evaluations")
    if invalid or run.best is not None:
        # off the tree
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.02), ncol=2, fontsize=8, frameon=False)
    return ax


def _or_nan(value: float | None) -> float:
    return np.nan if value is None else value


def progress_curves(run: LoadedRun, min_evals: int = 3, points: int = 200) -> pd.DataFrame:
    """After each of the first n dev evaluations: the best own pass rate among nodes with
    ≥ `min_evals` evaluations, the best clade estimate S/(S+F) among nodes whose clade has that many,
    and the root's clade estimate (the whole tree's pass rate)."""
    replay, tasks = build_tree(run.run.nodes(), [], None), recorded_tasks(run.run)
    evaluations = run.evaluations[run.evaluations["split"] == "dev"]
    total = run.clade.results  # the same rows counted by the same rule
    checkpoints = set(np.unique(np.linspace(1, total, min(points, total), dtype=int)).tolist())
    rows = []
    for node, task, outcome in zip(
        evaluations["node"], evaluations["task"], evaluations["outcome"], strict=True
    ):
        if not count_result(replay, node, task, str(outcome), tasks) or replay.results not in checkpoints:
            continue
        own = [replay.own_counts(n) for n in replay]
        clade = [replay.clade_counts(n) for n in replay]
        rows.append(
            {
                "evaluations": replay.results,
                "best_so_far": max((_or_nan(c.mean) for c in own if c.total >= min_evals), default=np.nan),
                "best_clade_estimate": max(
                    (_or_nan(c.mean) for c in clade if c.total >= min_evals), default=np.nan
                ),
                "tree_pass_rate": np.nanmean([_or_nan(replay.clade_counts(r).mean) for r in replay.roots]),
            }
        )
    return pd.DataFrame(rows, columns=["evaluations", "best_so_far", "best_clade_estimate", "tree_pass_rate"])


def plot_progress(run: LoadedRun, ax: Axes | None = None, min_evals: int = 3) -> Axes:
    """Best-so-far and clade-estimate curves over the evaluations, in recording order."""
    ax = _axes(ax, (8, 4))
    curves = progress_curves(run, min_evals=min_evals)
    for column, label in (
        ("best_so_far", f"best own pass rate (≥{min_evals} evals)"),
        ("best_clade_estimate", "best clade estimate S/(S+F)"),
        ("tree_pass_rate", "whole tree pass rate"),
    ):
        ax.plot(curves["evaluations"], curves[column], label=label, drawstyle="steps-post")
    ax.set_xlabel("evaluations")
    ax.set_ylabel("pass rate")
    ax.set_ylim(0, 1.05)
    ax.legend(fontsize=8)
    ax.set_title("progress over evaluations")
    return ax


def heldout_tasks(run: LoadedRun) -> list[str]:
    """The tasks only the final agent was scored on (split other than dev), in recording order."""
    evaluations = run.evaluations
    dev = set(evaluations.loc[evaluations["split"] == "dev", "task"])
    return [t for t in dict.fromkeys(evaluations.loc[evaluations["split"] != "dev", "task"]) if t not in dev]


def outcome_matrix(run: LoadedRun) -> pd.DataFrame:
    """Node × task: the fraction of counted attempts that passed (NaN: never evaluated); nodes in tree
    order, dev tasks first, then the held-out ones (`heldout_tasks`)."""
    frame = run.evaluations[run.evaluations["outcome"] != "infra"].copy()
    frame["passed"] = (frame["outcome"] == "pass").astype(float)
    matrix = frame.pivot_table(index="node", columns="task", values="passed", aggfunc="mean", observed=True)
    preorder = [n for root in run.clade.roots for n in (root, *run.clade.descendants(root))]
    order = [n for n in preorder if n in matrix.index]
    held = [t for t in heldout_tasks(run) if t in matrix.columns]
    columns = [t for t in matrix.columns if t not in set(held)] + held
    return matrix.reindex(index=order, columns=columns)


def plot_outcomes(run: LoadedRun, ax: Axes | None = None) -> Axes:
    """A node × task heatmap of outcomes (green: passed, red: failed, white: not evaluated); the
    held-out tasks are the last columns, after a dashed line, labelled in purple."""
    matrix = outcome_matrix(run)
    held = set(heldout_tasks(run))
    ax = _axes(ax, (max(6, 0.35 * len(matrix.columns) + 3), max(3, 0.3 * len(matrix) + 1)))
    image = ax.imshow(
        np.ma.masked_invalid(matrix.to_numpy(dtype=float)),
        cmap="RdYlGn",
        vmin=0,
        vmax=1,
        aspect="auto",
        interpolation="nearest",
    )
    ax.set_xticks(range(len(matrix.columns)), [f"{t} (held-out)" if t in held else t for t in matrix.columns],
                  rotation=90, fontsize=7)  # fmt: skip
    for label in ax.get_xticklabels():
        if label.get_text().endswith("(held-out)"):
            label.set_color("purple")
    dev_columns = sum(t not in held for t in matrix.columns)
    if 0 < dev_columns < len(matrix.columns):
        ax.axvline(dev_columns - 0.5, color="purple", linestyle="--", linewidth=1.5)
    short = short_labels(str(n) for n in matrix.index)
    ax.set_yticks(range(len(matrix.index)), [short[str(n)] for n in matrix.index], fontsize=7)
    ax.set_xlabel("task (held-out: only the final agent is scored on them)" if held else "task")
    ax.set_ylabel("node")
    ax.figure.colorbar(image, ax=ax, label="fraction passed")
    ax.set_title("outcomes per node and task")
    return ax


def plot_usage(run: LoadedRun, ax: Axes | None = None) -> Axes:
    """Model tokens per node (bars) and dollars per node (line, right axis)."""
    nodes = run.nodes
    ax = _axes(ax, (max(6, 0.3 * len(nodes) + 2), 4))
    positions = np.arange(len(nodes))
    ax.bar(positions, nodes["tokens"], color="tab:blue", label="tokens")
    short = short_labels(str(n) for n in nodes.index)
    ax.set_xticks(positions, [short[str(n)] for n in nodes.index], rotation=90, fontsize=7)
    ax.set_ylabel("tokens")
    cost = ax.twinx()
    cost.plot(positions, nodes["cost_usd"], color="tab:orange", marker="o", label="cost (USD)")
    cost.set_ylabel("USD")
    ax.set_title(f"usage: {int(nodes['tokens'].sum())} tokens, ${nodes['cost_usd'].sum():.4f}")
    return ax


def plot_best_so_far(run: LoadedRun, ax: Axes | None = None, against: str = "expansions") -> Axes:
    """The best-so-far (the report's, evolve.archive.costcurves) against the children made (`expansions`)
    or the CPU-hours spent (`cpu_hours`)."""
    from evolve.archive.costcurves import cost_curves

    if against not in ("expansions", "cpu_hours"):
        raise ValueError(f"against must be 'expansions' or 'cpu_hours', not {against!r}")
    curves = cost_curves(run.run)
    ax = _axes(ax, (8, 4))
    xs = curves.expansions if against == "expansions" else curves.cpu_hours
    ax.plot(
        xs,
        [_or_nan(y) for y in curves.best],
        drawstyle="steps-post",
        label=f"best-so-far (valid, ≥ {curves.min_results} results)",
    )
    ax.set_xlabel("children made" if against == "expansions" else "CPU-hours spent")
    ax.set_ylabel("own pass rate")
    ax.set_ylim(0, 1.05)
    ax.legend(fontsize=8)
    ax.set_title(f"best-so-far against {'expansions' if against == 'expansions' else 'CPU-hours'}")
    return ax


def plot_generations(run: LoadedRun, ax: Axes | None = None) -> Axes:
    """Each generation's (a node's depth) own pass rates of its valid evaluated nodes, as a box plot."""
    from evolve.archive.costcurves import cost_curves

    generations = cost_curves(run.run).generations
    ax = _axes(ax, (8, 4))
    depths = sorted(generations)
    if depths:
        ax.boxplot([generations[d] for d in depths], positions=depths, widths=0.6)
        for depth in depths:
            rates = generations[depth]
            ax.scatter([depth] * len(rates), rates, s=12, alpha=0.6, color="tab:blue")
    ax.set_xlabel("generation (depth)")
    ax.set_ylabel("own pass rate")
    ax.set_ylim(-0.05, 1.05)
    ax.set_title("scores per generation")
    return ax


def cost_per_improvement(run: LoadedRun) -> pd.DataFrame:
    """One row per improvement of the best-so-far (evolve.archive.costcurves): the node that took the lead,
    its rate, and the children and CPU-hours spent since the previous leader took it."""
    from evolve.archive.costcurves import cost_curves

    rows = [
        {
            "node": i.node,
            "rate": i.rate,
            "expansions": i.expansions,
            "cpu_hours": i.cpu_hours,
            "spent_expansions": i.spent_expansions,
            "spent_cpu_hours": i.spent_cpu_hours,
        }
        for i in cost_curves(run.run).improvements
    ]
    return pd.DataFrame(
        rows, columns=["node", "rate", "expansions", "cpu_hours", "spent_expansions", "spent_cpu_hours"]
    )


def plot_cost_per_improvement(run: LoadedRun, ax: Axes | None = None) -> Axes:
    """The CPU-hours spent for each improvement of the best-so-far, one bar per new leader."""
    frame = cost_per_improvement(run)
    ax = _axes(ax, (8, 4))
    ax.bar([str(node) for node in frame["node"]], frame["spent_cpu_hours"], color="tab:orange")
    ax.set_xlabel("improvement (the node that took the lead)")
    ax.set_ylabel("CPU-hours spent")
    mean = frame["spent_cpu_hours"].mean() if len(frame) else 0.0
    ax.set_title(f"cost per improvement: {len(frame)} improvements, {mean:.2f} CPU-hours each")
    return ax


def plot_climb(run: LoadedRun, ax: Axes | None = None) -> Axes:
    """The report's climb (evolve.archive.climb): each node's own dev pass rate against the expansion that
    made it, the best-so-far by the run's final rule, the final lineage in gold, its held-out scores."""
    from evolve.archive.climb import run_climb

    climb = run_climb(run.run)
    ax = _axes(ax, (9, 4))
    scored = [node for node in climb.nodes if node.score is not None]
    others = [node for node in scored if not node.on_lineage]
    ax.scatter([n.expansion for n in others], [_or_nan(n.score) for n in others], s=14, color="tab:gray",
               label="each node's own dev pass rate")  # fmt: skip
    lineage = [node for node in scored if node.on_lineage]
    ax.plot([n.expansion for n in lineage], [_or_nan(n.score) for n in lineage], "o--", color="#b07d00",
            label="the final agent's lineage")  # fmt: skip
    ax.plot(climb.steps, [_or_nan(y) for y in climb.best_score], drawstyle="steps-post", color="tab:blue",
            label="best-so-far (the run's final rule)")  # fmt: skip
    held = [step for step in climb.lineage if step.heldout is not None and step.heldout[1]]
    ax.scatter([s.expansion for s in held], [s.heldout[0] / s.heldout[1] for s in held if s.heldout],
               marker="D", color="tab:red", label="held-out, where measured")  # fmt: skip
    ax.set_xlabel("expansion")
    ax.set_ylabel("pass rate")
    ax.set_ylim(-0.05, 1.05)
    ax.legend(fontsize=8)
    ax.set_title("the climb")
    return ax
