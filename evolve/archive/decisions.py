"""A run's priced decisions: per search decision, the budget that bound it and the prices it saw,
a mixin of `Run`.

The runner writes one row as it dispatches a decision's jobs, so `evolve show`, the notebooks and a
test read what each decision was priced at, and a resumed run can be checked to decide on the
figures the first run saw. The table is created by the first write (runs made before it have none,
and read as having no priced decision).
"""

from __future__ import annotations

import sqlite3
from contextlib import AbstractContextManager
from dataclasses import dataclass

from evolve.search.spend import Spend

_TABLE = """CREATE TABLE IF NOT EXISTS decisions (
    decision INTEGER PRIMARY KEY,
    unit TEXT NOT NULL,
    limit_ REAL NOT NULL,
    spent REAL NOT NULL,
    in_flight REAL NOT NULL,
    reserve REAL NOT NULL,
    evaluation_price REAL NOT NULL,
    expansion_price REAL NOT NULL,
    evaluations_measured INTEGER NOT NULL,
    expansions_measured INTEGER NOT NULL,
    action TEXT NOT NULL
)"""
_COLUMNS = (
    "decision",
    "unit",
    "limit_",
    "spent",
    "in_flight",
    "reserve",
    "evaluation_price",
    "expansion_price",
    "evaluations_measured",
    "expansions_measured",
    "action",
)


@dataclass(frozen=True)
class PricedDecision:
    """One decision of the search: its ordinal, what it started, and the binding budget it saw."""

    decision: int
    action: str
    """`evaluate` or `expand`."""
    spend: Spend


class DecisionRows:
    """`record_decision` as the runner dispatches; `decisions()` for readers."""

    def _transaction(self) -> AbstractContextManager[sqlite3.Connection]:
        raise NotImplementedError  # `Run` provides it

    def _query(self, sql: str, params: tuple = ()) -> list[sqlite3.Row]:
        raise NotImplementedError  # `Run` provides it

    def record_decision(self, decision: int, action: str, spend: Spend) -> None:
        """Write the decision's prices (a re-recorded ordinal keeps its first row: a decision is made
        once)."""
        values = (
            decision,
            spend.unit,
            spend.limit,
            spend.spent,
            spend.in_flight,
            spend.reserve,
            spend.evaluation_price,
            spend.expansion_price,
            spend.evaluations_measured,
            spend.expansions_measured,
            action,
        )
        with self._transaction() as db:
            db.execute(_TABLE)
            db.execute(
                f"INSERT OR IGNORE INTO decisions ({', '.join(_COLUMNS)})"
                f" VALUES ({', '.join('?' * len(_COLUMNS))})",
                values,
            )

    def decisions(self) -> list[PricedDecision]:
        """The priced decisions in order (none for a run made before decisions were priced)."""
        try:
            rows = self._query(f"SELECT {', '.join(_COLUMNS)} FROM decisions ORDER BY decision")
        except sqlite3.OperationalError as exc:
            if "no such table" in str(exc):
                return []
            raise
        return [
            PricedDecision(
                int(r["decision"]),
                str(r["action"]),
                Spend(
                    unit=r["unit"],
                    limit=r["limit_"],
                    spent=r["spent"],
                    in_flight=r["in_flight"],
                    reserve=r["reserve"],
                    evaluation_price=r["evaluation_price"],
                    expansion_price=r["expansion_price"],
                    evaluations_measured=r["evaluations_measured"],
                    expansions_measured=r["expansions_measured"],
                ),
            )
            for r in rows
        ]
