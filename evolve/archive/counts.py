"""The search's counts straight from SQL: the archive's views (`evolve status`, `evolve tree`, the
frames, the notebooks, the report) on a long run's million results, without a Python object each.

The rule is the one in `evolve.archive.tree` (`count_result`): a node's own count is its first
counting result (pass, fail, timeout, error, forged; never infra) on each of the run's search tasks. SQL
counts that in two steps, both exact:
- one GROUP BY node over every counting row of the split and tasks: right for each (node, task)
  with one such row, which is nearly all of them;
- the pairs that may hold more (a repeat) are few and known from their attempts: attempts are
  unique per (node, task) (the table's UNIQUE constraint), so two rows of a pair cannot both be
  attempt 1. Their rows are read in recording order and put right here: all taken out, the first
  counting one per pair put back.
Tests compare every count with `build_tree` (the rule applied row by row).
"""

from __future__ import annotations

import json
from collections.abc import Collection
from dataclasses import dataclass
from typing import TYPE_CHECKING

from evolve.archive.tree import CladeTree, recorded_tasks
from evolve.archive.vocab import NodeStatus, Outcome, parse

if TYPE_CHECKING:
    from evolve.archive.store import Run

_COUNTING = tuple(o.value for o in Outcome if o.counts is not None)
_SUCCESS = tuple(o.value for o in Outcome if o.counts)


@dataclass
class OwnCounts:
    """One node's counted successes and failures, and (when asked for) the tasks they are on."""

    successes: int = 0
    failures: int = 0
    tasks: set[str] | None = None


def _where(split: str | None, tasks: Collection[str] | None, alias: str = "") -> tuple[str, list]:
    """The rows the rule may count: a counting outcome, of `split` (None: any), on one of `tasks`."""
    where = [f"{alias}outcome IN ({', '.join('?' * len(_COUNTING))})"]
    params: list = list(_COUNTING)
    if split is not None:
        where.append(f"{alias}split = ?")
        params.append(split)
    if tasks is not None:
        where.append(f"{alias}task IN (SELECT value FROM json_each(?))")
        params.append(json.dumps(sorted(tasks)))
    return " AND ".join(where), params


def own_counts(run: Run, split: str | None = "dev", *, with_tasks: bool = False) -> dict[str, OwnCounts]:
    """Each evaluated node's own counts by the search's rule (nodes without a counted result are
    absent); with `with_tasks`, the tasks counted too."""
    with run.snapshot():  # the two queries see one state of a live run
        tasks = recorded_tasks(run)
        where, params = _where(split, tasks)
        success = f"outcome IN ({', '.join('?' * len(_SUCCESS))})"
        listed = ", json_group_array(task)" if with_tasks else ""
        rows = run._query(
            f"SELECT node, SUM({success}), COUNT(*){listed} FROM evaluations WHERE {where} GROUP BY node",
            (*_SUCCESS, *params),
        )
        counts = {}
        for row in rows:
            node, passed, total = row[0], int(row[1]), int(row[2])
            counts[node] = OwnCounts(passed, total - passed, set(json.loads(row[3])) if with_tasks else None)
        _correct_repeats(run, counts, split, tasks)
    return counts


def _correct_repeats(
    run: Run, counts: dict[str, OwnCounts], split: str | None, tasks: Collection[str] | None
) -> None:
    """Count the pairs that may hold a repeat by the rule itself (see the module docstring)."""
    where, params = _where(split, tasks, "e.")
    rows = run._query(
        "SELECT e.node, e.task, e.outcome FROM (SELECT DISTINCT node, task FROM evaluations WHERE attempt != "
        "1) r"
        f" CROSS JOIN evaluations e ON e.node = r.node AND e.task = r.task WHERE {where} ORDER BY e.id",
        tuple(params),
    )
    first: dict[tuple[str, str], str] = {}
    for node, task, outcome in rows:
        count = counts[node]
        if outcome in _SUCCESS:
            count.successes -= 1
        else:
            count.failures -= 1
        first.setdefault((node, task), outcome)
    for (node, _), outcome in first.items():
        count = counts[node]
        if outcome in _SUCCESS:
            count.successes += 1
        else:
            count.failures += 1


def counted_tree(run: Run, split: str | None = "dev", *, with_tasks: bool = True) -> CladeTree:
    """The run's clade tree, counted by the search's rule in SQL. With `with_tasks` it equals the tree
    `build_tree` makes from the rows (each node's evaluated tasks included); without, it holds the
    counts only (`CladeTree.record_counts`), for views that draw counts and nothing else."""
    tree = CladeTree(capacity=64)
    with run.snapshot():  # every counted node is in the tree, on a live run too
        nodes = run._query("SELECT id, parent, status FROM nodes ORDER BY rowid")
        counts = own_counts(run, split, with_tasks=with_tasks)
    for node_id, parent, status in nodes:
        tree.add_node(node_id, parent, valid=parse(NodeStatus, status, "nodes.status") == NodeStatus.VALID)
    tree.record_counts(
        (node, c.successes, c.failures, None if c.tasks is None else frozenset(c.tasks))
        for node, c in counts.items()
    )
    return tree
