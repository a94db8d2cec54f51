"""Which edits mattered: every parent → child edit of the whole tree, ranked by the change in clade
estimate S/(S+F) from parent to child, and the node whose lineage is worth walking."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd

if TYPE_CHECKING:
    from evolve.notebook import LoadedRun

EDIT_COLUMNS = ["parent", "instructions", "parent_clade_rate", "clade_rate", "clade_delta", "clade_results",
                "parent_rate", "pass_rate", "delta"]  # fmt: skip


def improvements(run: LoadedRun, min_evals: int = 1) -> pd.DataFrame:
    """Every parent → child edit whose child's clade has ≥ `min_evals` counted results, by `clade_delta`.

    `clade_delta` = the child's clade estimate S/(S+F) minus its parent's: positive when the line of
    descent the edit started did better than the parent's clade as a whole (the HGM signal of an edit
    that mattered, read over the whole tree, not only the best lineage). `delta` is the change of own
    pass rate (NaN where either end has no result of its own)."""
    nodes = run.nodes
    clade_results = nodes["clade_successes"] + nodes["clade_failures"]
    rows = []
    for child, row in nodes[clade_results >= min_evals].iterrows():
        parent = row["parent"]
        if pd.isna(parent) or parent not in nodes.index:
            continue
        rows.append({
            "node": child,
            "parent": parent,
            "instructions": (row["instructions"] or "").strip(),
            "parent_clade_rate": nodes.at[parent, "clade_rate"],
            "clade_rate": row["clade_rate"],
            "clade_delta": row["clade_rate"] - nodes.at[parent, "clade_rate"],
            "clade_results": int(row["clade_successes"] + row["clade_failures"]),
            "parent_rate": nodes.at[parent, "pass_rate"],
            "pass_rate": row["pass_rate"],
            "delta": row["pass_rate"] - nodes.at[parent, "pass_rate"],
        })  # fmt: skip
    frame = pd.DataFrame(rows, columns=["node", *EDIT_COLUMNS]).set_index("node")
    return frame.sort_values(["clade_delta", "clade_results"], ascending=[False, False], na_position="last")


def focus_node(run: LoadedRun) -> tuple[str | None, str]:
    """The node whose lineage the notebook walks, and why: the best belief when it is not a root;
    else the child of the edit that mattered most (a run whose best belief is still its seed has
    no best lineage to walk, but its edits still have a story); else the deepest node."""
    roots = set(run.clade.roots)
    if run.best is not None and run.best not in roots:
        return run.best, f"the best-belief node {run.best}"
    edits = improvements(run)
    if len(edits):
        top = str(edits.index[0])
        why = f"the best belief is the root {run.best}, so the child of the top-ranked edit, {top}"
        return top, why if run.best is not None else f"the child of the top-ranked edit, {top}"
    if len(run.nodes):
        deepest = str(run.nodes["depth"].idxmax())
        return deepest, f"the deepest node, {deepest} (no edit has a result yet)"
    return None, "an empty run"
