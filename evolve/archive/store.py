"""One run on disk (docs/design.md §A run on disk): the git repo of agent code, the SQLite metadata,
the logs.

Crash safety: a node's git commit and its ref are written before its row, and the row is the
commit point. Opening a run deletes refs that have no row (a writer died between the two), so an
opened run never holds half a node. Every state change is one SQLite transaction (WAL mode).
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path, PurePath
from typing import IO, Self

from evolve.archive import schema
from evolve.archive.code import NODE_ID, CodeStore
from evolve.archive.counts import counted_tree
from evolve.archive.decisions import DecisionRows
from evolve.archive.jobrows import MADE, JobRows
from evolve.archive.reads import ViewReads
from evolve.archive.records import OUTCOMES, Evaluation, Node
from evolve.archive.tree import CladeTree
from evolve.archive.vocab import JobState, NodeStatus, Outcome, Split
from evolve.archive.writer import RunDamaged, claim_writer
from evolve.config import RunConfig, dump_config, parse_config
from evolve.errors import EvolveError

BUDGET_CHANGES_META = "budget_changes"


class RunNotFound(EvolveError):
    """No run directory at the given path."""


class NodeNotFound(EvolveError):
    """The run has no node with the given id."""


class Run(JobRows, DecisionRows, ViewReads):
    """A run directory: `run.toml`, `code.git/`, `run.sqlite`, `logs/`, `exchanges/`."""

    def __init__(
        self, path: Path, connection: sqlite3.Connection, writer_lock: IO[str] | None = None
    ) -> None:
        self.path = Path(path)
        self.code = CodeStore(self.path / "code.git")
        self._db = connection
        self._lock = threading.RLock()
        self._adding = threading.Lock()
        self._writer_lock = writer_lock

    # -- opening -------------------------------------------------------------------------

    @classmethod
    def create(cls, path: Path | str, config: RunConfig | None = None, *, run_id: str | None = None) -> Run:
        """Create an empty run directory at `path` (which must not hold a run already).

        The writer lock comes first and the database appears last, by a rename: of two creators
        one wins and the other is refused, and a creator killed midway leaves no run (the next
        `create` at the path starts over)."""
        path = Path(path)
        if (path / "run.sqlite").exists():
            raise EvolveError(f"{path} already holds a run")
        path.mkdir(parents=True, exist_ok=True)
        lock = claim_writer(path)
        try:
            if (path / "run.sqlite").exists():
                raise EvolveError(f"{path} already holds a run")
            config = config or RunConfig()
            (path / "run.toml").write_text(dump_config(config))
            for sub in ("logs", "exchanges"):
                (path / sub).mkdir(exist_ok=True)
            if not (path / "code.git" / "HEAD").exists():
                CodeStore.init(path / "code.git")
            staging = path / "run.sqlite.creating"
            staging.unlink(missing_ok=True)
            fresh = sqlite3.connect(staging, isolation_level=None)
            try:
                schema.create(fresh, run_id=run_id or uuid.uuid4().hex[:12], name=config.run.name)
            finally:
                fresh.close()
            staging.replace(path / "run.sqlite")
            return cls(path, schema.connect(path / "run.sqlite"), lock)
        except BaseException:
            lock.close()
            raise

    @classmethod
    def open(cls, path: Path | str, *, writer: bool = False) -> Run:
        """Open an existing run.

        Readers see a consistent run without changing anything: the database is opened read-only,
        and a node exists iff its row does. A `writer` (the runner, resume, `eval` into the run)
        takes the run's writer lock first, so there is one at a time, migrates an older schema, and
        repairs what a crashed writer left half-done: a commit and ref without a row is discarded.
        """
        path = Path(path)
        database = path / "run.sqlite"
        if not database.is_file() or not (path / "code.git").is_dir():
            raise RunNotFound(f"no run at {path} (expected run.sqlite and code.git/ there)")
        lock = claim_writer(path) if writer else None
        try:
            connection = schema.connect(database, read_only=not writer)
        except BaseException:
            if lock is not None:
                lock.close()
            raise
        run = cls(path, connection, lock)
        try:
            try:
                schema.migrate(run._db) if writer else schema.version(run._db)
            except sqlite3.DatabaseError as exc:
                raise RunDamaged(database, exc) from None
            if writer:
                run._repair()
        except BaseException:
            run.close()
            raise
        return run

    def _repair(self) -> None:
        refs = self.code.refs()
        rows = {node.id: node for node in self.nodes()}
        for node_id in refs.keys() - rows.keys():
            self.code.delete_ref(node_id)  # commit written, row never was: discard
        for node_id in rows.keys() - refs.keys():
            node = rows[node_id]
            if not self.code.has_commit(node.commit):
                raise EvolveError(f"{self.path}: node {node_id} refers to missing commit {node.commit}")
            self.code.create_ref(node_id, node.commit)

    def close(self) -> None:
        with self._lock:
            self._db.close()
            if self._writer_lock is not None:
                self._writer_lock.close()  # closing the file releases the flock
                self._writer_lock = None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        with self._lock, self._named_faults():
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
                self._db.execute("COMMIT")
            except BaseException:
                # SQLite may have rolled back already (a full disk); a failed COMMIT leaves it open
                if self._db.in_transaction:
                    self._db.execute("ROLLBACK")
                raise

    def _query(self, sql: str, params: tuple = ()) -> list[sqlite3.Row]:
        with self._lock, self._named_faults():
            return self._db.execute(sql, params).fetchall()

    @contextmanager
    def _named_faults(self) -> Iterator[None]:
        """A database error carries the file's path (as a note), so the CLI's one line can name it."""
        try:
            yield
        except sqlite3.Error as exc:
            exc.add_note(f"database: {self.path / 'run.sqlite'}")
            raise

    # -- identity and config -------------------------------------------------------------

    @property
    def id(self) -> str:
        return self.meta("run_id")

    @property
    def config(self) -> RunConfig:
        return parse_config((self.path / "run.toml").read_text(), self.path / "run.toml")

    def meta(self, key: str) -> str:
        rows = self._query("SELECT value FROM meta WHERE key = ?", (key,))
        if not rows:
            raise KeyError(key)
        return rows[0]["value"]

    def set_meta(self, key: str, value: str) -> None:
        """Record a run-wide fact (e.g. `image:evolve-base` → its image id)."""
        with self._transaction() as db:
            db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, value))

    def change_budget(self, config: RunConfig, changes: Mapping[str, list]) -> None:
        """Freeze `config` as the run's own (a stopped run's budgets changed before it goes on) and add
        `changes` (`{name: [old, new]}`) to the meta list `budget_changes`, so every earlier limit stays
        on record. Call under the writer lock, with no runner in this run."""
        if self._writer_lock is None:
            raise EvolveError(f"{self.path}: changing a run's budget needs the writer lock")
        try:
            history = json.loads(self.meta(BUDGET_CHANGES_META))
        except KeyError:
            history = []
        history.append({"time": time.time(), "changes": dict(changes)})
        staging = self.path / "run.toml.changing"
        staging.write_text(dump_config(config))
        staging.replace(self.path / "run.toml")
        self.set_meta(BUDGET_CHANGES_META, json.dumps(history))

    def budget_changes(self) -> list[dict]:
        """Every budget change made on a resume, oldest first: `{"time": ..., "changes": {name: [old,
        new]}}`."""
        try:
            return json.loads(self.meta(BUDGET_CHANGES_META))
        except KeyError:
            return []

    # -- nodes ---------------------------------------------------------------------------

    def add_node(
        self,
        code_dir: Path,
        *,
        parent: str | None = None,
        origin: str = "seed",
        status: str = "valid",
        reason: str | None = None,
        instructions: str | None = None,
        node_id: str | None = None,
        job_id: int | None = None,
    ) -> Node:
        """Commit `code_dir` as a new node, child of `parent` (None: a root).

        With `job_id`, the expansion job that produced the node is finished in the same transaction.
        """
        if status not in ("valid", "invalid"):
            raise ValueError(f"node status must be valid or invalid, not {status!r}")
        with self._adding:  # one node at a time: the next id is taken when its row is written
            return self._add_node(code_dir, parent, origin, status, reason, instructions, node_id, job_id)

    def _add_node(
        self,
        code_dir: Path,
        parent: str | None,
        origin: str,
        status: str,
        reason: str | None,
        instructions: str | None,
        node_id: str | None,
        job_id: int | None,
    ) -> Node:
        parent_commit = self.node(parent).commit if parent is not None else None
        node_id = node_id if node_id is not None else self._next_node_id()
        if not NODE_ID.match(node_id):
            raise EvolveError(f"node id {node_id!r} must match {NODE_ID.pattern}")
        created = time.time()
        message = f"node {node_id}" + (f" (child of {parent}, {origin})" if parent else f" ({origin})")
        commit = self.code.commit_dir(code_dir, parent_commit, message, created)
        self.code.create_ref(node_id, commit)
        node = Node(node_id, parent, commit, created, origin, NodeStatus(status), reason, instructions)
        try:
            self.adopt_node(node, job_id=job_id)
        except BaseException:
            self.code.delete_ref(node_id)
            raise
        return node

    def adopt_node(self, node: Node, *, job_id: int | None = None) -> None:
        """Insert the row of a node whose commit and ref already exist (importers, `add_node`)."""
        with self._transaction() as db:
            if job_id is not None:
                self._finish_job(db, job_id, JobState.FINISHED, MADE + node.id)
            db.execute(
                "INSERT INTO nodes (id, parent, commit_sha, created, origin, status, reason,"
                " instructions, tokens, cost_usd) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    node.id,
                    node.parent,
                    node.commit,
                    node.created,
                    node.origin,
                    node.status,
                    node.reason,
                    node.instructions,
                    node.tokens,
                    node.cost_usd,
                ),
            )
            if node.id.isdigit():
                db.execute(
                    "UPDATE counters SET value = MAX(value, ?) WHERE name = 'node'", (int(node.id) + 1,)
                )

    def _next_node_id(self) -> str:
        # Read, not reserved: the row's insert advances the counter (`adopt_node`), so a writer
        # killed before the row leaves the id free and a resumed run numbers its nodes as an
        # uninterrupted one would (the orphan ref is discarded on open).
        (row,) = self._query("SELECT value FROM counters WHERE name = 'node'")
        return str(row["value"])

    def node(self, node_id: str | None) -> Node:
        rows = self._query("SELECT * FROM nodes WHERE id = ?", (node_id,))
        if not rows:
            raise NodeNotFound(f"run {self.path} has no node {node_id!r}")
        return schema.node_from_row(rows[0])

    def nodes(self) -> list[Node]:
        """All nodes in creation order (parents before children)."""
        return [schema.node_from_row(r) for r in self._query("SELECT * FROM nodes ORDER BY rowid")]

    def invalidate(self, node_id: str, reason: str) -> bool:
        """Mark a valid node invalid with `reason` (a check that needs its results, e.g. DGM's "compiled"
        check); its evaluations stay recorded. False when it was invalid already (the first reason stays)."""
        with self._transaction() as db:
            changed = db.execute(
                "UPDATE nodes SET status = 'invalid', reason = ? WHERE id = ? AND status = 'valid'",
                (reason, node_id),
            ).rowcount
            if not changed and db.execute("SELECT 1 FROM nodes WHERE id = ?", (node_id,)).fetchone() is None:
                raise NodeNotFound(f"run {self.path} has no node {node_id!r}")
        return bool(changed)

    def add_usage(self, node_id: str, *, tokens: int = 0, cost_usd: float = 0.0) -> None:
        """Add model usage (tokens, dollars) to a node's totals."""
        with self._transaction() as db:
            changed = db.execute(
                "UPDATE nodes SET tokens = tokens + ?, cost_usd = cost_usd + ? WHERE id = ?",
                (tokens, cost_usd, node_id),
            ).rowcount
        if not changed:
            raise NodeNotFound(f"run {self.path} has no node {node_id!r}")

    def usage_totals(self) -> tuple[int, float]:
        """Tokens and dollars summed over all nodes."""
        (row,) = self._query("SELECT COALESCE(SUM(tokens), 0), COALESCE(SUM(cost_usd), 0) FROM nodes")
        return int(row[0]), float(row[1])

    def evaluation_usage(self) -> tuple[int, int]:
        """Evaluation rows (all splits) and the tokens the gateway counted for them."""
        (row,) = self._query("SELECT COUNT(*), COALESCE(SUM(tokens), 0) FROM evaluations")
        return int(row[0]), int(row[1])

    # -- code ----------------------------------------------------------------------------

    def checkout(self, node_id: str, dest: Path) -> Path:
        """Materialise a node's code in `dest`."""
        return self.code.checkout(self.node(node_id).commit, dest)

    def diff(self, node_id: str, against: str = "parent") -> str:
        """Unified diff of a node's code against its parent, the root, or another node."""
        node = self.node(node_id)
        if against == "parent":
            base = self.node(node.parent).commit if node.parent is not None else None
        elif against == "root":
            root = node
            while root.parent is not None:
                root = self.node(root.parent)
            base = root.commit
        else:
            base = self.node(against).commit
        return self.code.diff(base, node.commit)

    # -- evaluations ---------------------------------------------------------------------

    def record_evaluation(
        self,
        node_id: str,
        task: str,
        outcome: str,
        *,
        duration_s: float | None = None,
        tokens: int = 0,
        log_path: str | None = None,
        split: str = "dev",
        job_id: int | None = None,
    ) -> Evaluation:
        """Record one graded attempt; the attempt number is the next for (node, task).

        With `job_id`, the evaluation job is finished in the same transaction, so a crash leaves
        either both the result and the finished job or neither.
        """
        if outcome not in OUTCOMES:
            raise ValueError(f"unknown outcome {outcome!r}; expected one of {', '.join(OUTCOMES)}")
        created = time.time()
        with self._transaction() as db:
            if db.execute("SELECT 1 FROM nodes WHERE id = ?", (node_id,)).fetchone() is None:
                raise NodeNotFound(f"run {self.path} has no node {node_id!r}")
            (attempt,) = db.execute(
                "SELECT COUNT(*) + 1 FROM evaluations WHERE node = ? AND task = ?", (node_id, task)
            ).fetchone()
            cursor = db.execute(
                "INSERT INTO evaluations (node, task, split, attempt, outcome, duration_s, tokens,"
                " log_path, created) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (node_id, task, split, attempt, outcome, duration_s, tokens, log_path, created),
            )
            if job_id is not None:
                self._finish_job(db, job_id, JobState.FINISHED, outcome)
        return Evaluation(
            node_id,
            task,
            attempt,
            Outcome(outcome),
            duration_s,
            tokens,
            log_path,
            created,
            cursor.lastrowid,
            Split(split),
        )

    def adopt_evaluation(self, evaluation: Evaluation) -> None:
        """Insert an evaluation exactly as given (importers)."""
        e = evaluation
        with self._transaction() as db:
            db.execute(
                "INSERT INTO evaluations (node, task, split, attempt, outcome, duration_s, tokens,"
                " log_path, created) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    e.node,
                    e.task,
                    e.split,
                    e.attempt,
                    e.outcome,
                    e.duration_s,
                    e.tokens,
                    e.log_path,
                    e.created,
                ),
            )

    def evaluations(self, node_id: str | None = None, *, split: str | None = None) -> list[Evaluation]:
        """Evaluations in recording order, optionally of one node and/or one split."""
        where, params = [], []
        if node_id is not None:
            where.append("node = ?")
            params.append(node_id)
        if split is not None:
            where.append("split = ?")
            params.append(split)
        clause = f" WHERE {' AND '.join(where)}" if where else ""
        rows = self._query(f"SELECT * FROM evaluations{clause} ORDER BY id", tuple(params))
        return [self._located(schema.evaluation_from_row(r)) for r in rows]

    def _located(self, evaluation: Evaluation) -> Evaluation:
        """The evaluation with its log directory found through this run's path: a run made with a relative
        archive path recorded `archive/NAME/logs/job-N`, relative to the writer's working directory, which a
        reader elsewhere (a resume from another directory, `evolve show`, a notebook) does not share."""
        recorded = PurePath(evaluation.log_path) if evaluation.log_path else None
        if recorded is None or recorded.parent.name != "logs" or not recorded.name.startswith("job-"):
            return evaluation
        return replace(evaluation, log_path=str(self.path / "logs" / recorded.name))

    def tree(self, split: str | None = "dev", *, with_tasks: bool = True) -> CladeTree:
        """The clade tree of `split` (None: all), counted as the search counts, in SQL (`archive.counts`)."""
        return counted_tree(self, split, with_tasks=with_tasks)

    def log_dir(self, job_id: int) -> Path:
        """The directory for one job's transcripts, outputs and diffs."""
        directory = self.path / "logs" / f"job-{job_id}"
        directory.mkdir(parents=True, exist_ok=True)
        return directory

    def exchanges_file(self, job_id: int) -> Path:
        """Where the gateway records one job's model exchanges (JSONL)."""
        return self.path / "exchanges" / f"job-{job_id}.jsonl"
