"""pandas views of a run, for notebooks: one row per node, one row per evaluation."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pandas as pd
import pyarrow as pa

from evolve.archive.records import Evaluation, Node
from evolve.archive.store import Run
from evolve.archive.tree import CladeTree
from evolve.archive.vocab import Outcome

_NODE_COLUMNS = [field for field in Node.__dataclass_fields__]
_EVALUATION_COLUMNS = [field for field in Evaluation.__dataclass_fields__]
_OUTCOME_CODE = (
    "CASE outcome " + " ".join(f"WHEN '{o.value}' THEN {i}" for i, o in enumerate(Outcome)) + " END"
)
_EVALUATION_SCHEMA = pa.schema(
    [
        (
            name,
            {
                "node": pa.string(),
                "task": pa.string(),
                "outcome": pa.int8(),
                "log_path": pa.string(),
                "split": pa.string(),
                "duration_s": pa.float64(),
                "created": pa.float64(),
            }.get(name, pa.int64()),
        )
        for name in _EVALUATION_COLUMNS
    ]
)
_SELECTED = [_OUTCOME_CODE if column == "outcome" else column for column in _EVALUATION_COLUMNS]


@contextmanager
def _opened(run: Run | Path | str) -> Iterator[Run]:
    if isinstance(run, Run):
        yield run
    else:
        with Run.open(run) as opened:
            yield opened


def nodes_frame(run: Run | Path | str, *, tree: CladeTree | None = None) -> pd.DataFrame:
    """Nodes indexed by id, with own and clade pass counts and rates, depth and child count.

    The counts are the search's (`Run.tree`, counted in SQL); `tree` is that tree when the caller
    has it already (`load_run`)."""
    with _opened(run) as opened:
        nodes = opened.nodes()
        tree = tree if tree is not None else opened.tree(with_tasks=False)
    frame = pd.DataFrame(
        [tuple(getattr(node, name) for name in _NODE_COLUMNS) for node in nodes], columns=_NODE_COLUMNS
    )
    own = [tree.own_counts(node.id) for node in nodes]
    clade = [tree.clade_counts(node.id) for node in nodes]
    depths: dict[str, int] = {}
    for node in nodes:  # parents first: one pass, however deep the tree
        parent = tree.parent(node.id)
        depths[node.id] = 0 if parent is None else depths[str(parent)] + 1
    frame["created"] = pd.to_datetime(frame["created"], unit="s", utc=True)
    frame["status"] = frame["status"].astype(str)  # plain strings, not the vocabulary's members
    frame["depth"] = [depths[node.id] for node in nodes]
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
        # Arrow columns straight from SQLite (`Run._table`): a Python object per cell was most of the
        # time on a long run's million evaluations. The outcome comes as its code in the vocabulary;
        # one the vocabulary lacks is missing, as in a Categorical.
        table = opened._table(f"SELECT {', '.join(_SELECTED)} FROM evaluations ORDER BY id")
    # A column that is NULL in every row comes typed int64; each gets its own type here.
    table = table.rename_columns(_EVALUATION_COLUMNS).cast(_EVALUATION_SCHEMA)
    frame = table.to_pandas()
    frame["created"] = pd.to_datetime(frame["created"], unit="s", utc=True)
    codes = frame["outcome"].fillna(-1).to_numpy(dtype="int8")
    frame["outcome"] = pd.Categorical.from_codes(codes, categories=pd.Index([o.value for o in Outcome]))
    frame["split"] = frame["split"].astype(str)
    return frame.set_index("id")
