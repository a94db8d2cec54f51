"""The digest of a lineage: one hash over what a run claims (its tree of code and its results).

A bundle checks itself (each node's files rebuild to its recorded tree hash), but a forger who
rewrites both a commit and its recorded tree hash passes that check. The digest, published beside
a bundle (`evolve export` prints it), pins the lineage: `evolve replay BUNDLE --expect DIGEST` and
`evolve import --expect DIGEST` refuse a bundle whose digest differs.

It covers every node's id, parent and git tree hash, and every evaluation's node, task, split,
attempt and outcome, in a canonical order. Log paths, timestamps, durations and token counts are
left out: they change when a run travels or say nothing about what the code achieved.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass

from evolve.archive.records import Evaluation
from evolve.archive.store import Run
from evolve.errors import EvolveError

PREFIX = "sha256:"


@dataclass(frozen=True)
class NodeClaim:
    """One node as the digest sees it."""

    id: str
    parent: str | None
    tree: str


def evaluation_claim(row: Evaluation | dict) -> tuple[str, str, str, int, str]:
    """The fields of an evaluation (a record or a bundle's JSON row) that the digest covers."""
    if isinstance(row, Evaluation):
        return (row.node, row.task, row.split, row.attempt, row.outcome)
    return (
        str(row["node"]),
        str(row["task"]),
        str(row.get("split", "dev")),
        int(row["attempt"]),
        str(row["outcome"]),
    )


def lineage_digest(nodes: Iterable[NodeClaim], evaluations: Iterable[Evaluation | dict]) -> str:
    """`sha256:<hex>` over the nodes and evaluations, independent of the order they come in."""
    canonical = {
        "nodes": sorted([n.id, n.parent or "", n.tree] for n in nodes),
        "evaluations": sorted(list(evaluation_claim(e)) for e in evaluations),
    }
    text = json.dumps(canonical, separators=(",", ":"), sort_keys=True)
    return PREFIX + hashlib.sha256(text.encode()).hexdigest()


def run_digest(run: Run, nodes: Iterable[str] | None = None) -> str:
    """The digest of `run` (or of the nodes `nodes`, e.g. one lineage), tree hashes taken from its git
    store."""
    chosen = run.nodes() if nodes is None else [run.node(n) for n in nodes]
    ids = {n.id for n in chosen}
    claims = [NodeClaim(n.id, n.parent, run.code.tree_hash(n.commit)) for n in chosen]
    return lineage_digest(claims, [e for e in run.evaluations() if e.node in ids])


def check_expected(actual: str, expected: str | None, what: str) -> None:
    """Refuse `what` unless its digest is `expected` (with or without the `sha256:` prefix)."""
    if expected is None:
        return
    wanted = expected.strip().lower()
    wanted = wanted if wanted.startswith(PREFIX) else PREFIX + wanted
    if actual != wanted:
        raise EvolveError(f"{what}: lineage digest is {actual}, expected {wanted}; refusing it")
