"""pandas views of a run, for notebooks: one row per node, one row per evaluation."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict
from pathlib import Path

import pandas as pd

from evolve.archive.records import Evaluation, Node
from evolve.archive.store import Run
from evolve.archive.vocab import Outcome

_NODE_COLUMNS = [field for field in Node.__dataclass_fields__]
_EVALUATION_COLUMNS = [field for field in Evaluation.__dataclass_fields__]


@contextmanager
def _opened(run: Run | Path | str) -> Iterator[Run]:
    if isinstance(run, Run):
        yield run
    else:
        with Run.open(run) as opened:
            yield opened


def nodes_frame(run: Run | Path | str) -> pd.DataFrame:
    """Nodes indexed by id, with own and clade pass counts and rates, depth and child count."""
    with _opened(run) as opened:
        nodes = opened.nodes()
        tree = opened.tree()
    frame = pd.DataFrame([asdict(node) for node in nodes], columns=_NODE_COLUMNS)
    own = [tree.own_counts(node.id) for node in nodes]
    clade = [tree.clade_counts(node.id) for node in nodes]
    frame["created"] = pd.to_datetime(frame["created"], unit="s", utc=True)
    frame["status"] = frame["status"].astype(str)  # plain strings, not the vocabulary's members
    frame["depth"] = [tree.depth(node.id) for node in nodes]
    frame["children"] = [len(tree.children(node.id)) for node in nodes]
    frame["successes"] = [c.successes for c in own]
    frame["failures"] = [c.failures for c in own]
    frame["pass_rate"] = [c.mean for c in own]
    frame["clade_successes"] = [c.successes for c in clade]
    frame["clade_failures"] = [c.failures for c in clade]
    frame["clade_rate"] = [c.mean for c in clade]
    frame["pass_rate"] = frame["pass_rate"].astype("float64")
    frame["clade_rate"] = frame["clade_rate"].astype("float64")
    return frame.set_index("id")


def evaluations_frame(run: Run | Path | str) -> pd.DataFrame:
    """One row per graded attempt: node, task, attempt, outcome, duration, tokens, log path."""
    with _opened(run) as opened:
        # Straight from the rows: a record object per evaluation (and `asdict` of it) is most of the
        # time on a long run's million evaluations. The columns are named as Evaluation's fields.
        rows = opened._query(f"SELECT {', '.join(_EVALUATION_COLUMNS)} FROM evaluations ORDER BY id")
    frame = pd.DataFrame.from_records([tuple(row) for row in rows], columns=_EVALUATION_COLUMNS)
    frame["created"] = pd.to_datetime(frame["created"], unit="s", utc=True)
    outcomes = [str(o) for o in frame["outcome"]]  # plain strings, not the vocabulary's members
    frame["outcome"] = pd.Categorical(outcomes, categories=[o.value for o in Outcome])
    frame["split"] = frame["split"].astype(str)
    return frame.set_index("id")
