"""Reproducing a lineage: rebuild every node's code and check its git tree hash; re-run recorded
evaluations against their recorded model exchanges (no model) and count matching outcomes.

The code check is independent of the recorded commits: each node's files are checked out and
committed afresh into an empty repository (on top of the rebuilt parent), and the tree hash of that
new commit must equal the recorded one; the recorded commit's parent must be the parent node's.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path

import git

from evolve.archive.bundlefiles import extract, fetch_code, read_jsonl, tree_of
from evolve.archive.code import CodeStore
from evolve.archive.digest import NodeClaim, evaluation_claim, lineage_digest
from evolve.archive.lineage import import_bundle
from evolve.archive.records import Evaluation, Job
from evolve.archive.store import Run
from evolve.engine.replays import ReplayChannels, replayable
from evolve.errors import EvolveError


@dataclass(frozen=True)
class CodeCheck:
    """One node's code rebuilt from its files: recorded and rebuilt tree hashes, parent link."""

    node: str
    recorded_tree: str
    rebuilt_tree: str
    parent_ok: bool

    @property
    def ok(self) -> bool:
        return self.recorded_tree == self.rebuilt_tree and self.parent_ok


@dataclass(frozen=True)
class Replayed:
    """The outcome of one re-run evaluation, and what the evaluation said about it."""

    outcome: str
    detail: str = ""


@dataclass(frozen=True)
class Mismatch:
    task: str
    recorded: str
    replayed: str
    detail: str


@dataclass(frozen=True)
class RerunCheck:
    """One node's recorded evaluations re-run in replay mode."""

    node: str
    compared: int
    matching: int
    mismatches: tuple[Mismatch, ...] = ()
    """Each re-run whose outcome differs from the recorded one."""
    skipped: tuple[str, ...] = field(default=())
    """Tasks whose evaluation job has no recorded exchanges (cannot be replayed)."""


@dataclass(frozen=True)
class _Recorded:
    """What a source says each node is: its commit, recorded tree hash and parent node."""

    node: str
    parent: str | None
    commit: str
    tree: str


@contextmanager
def _source(path: Path) -> Iterator[tuple[CodeStore, list[_Recorded], list[Evaluation | dict]]]:
    """The code store, recorded nodes and evaluations of a run directory or of a bundle (extracted to a
    scratch dir)."""
    if path.is_dir():
        with Run.open(path) as run:
            yield (
                run.code,
                [_Recorded(n.id, n.parent, n.commit, run.code.tree_hash(n.commit)) for n in run.nodes()],
                list(run.evaluations()),
            )
        return
    if not path.exists():
        raise EvolveError(f"{path}: neither a run directory nor a bundle file")
    with tempfile.TemporaryDirectory(prefix="evolve-replay-") as tmp:
        staging = Path(tmp)
        extract(path, staging, ("code.bundle", "nodes.jsonl", "evaluations.jsonl"))
        store = CodeStore.init(staging / "code.git")
        fetch_code(store, staging, path)
        try:
            recorded = [
                _Recorded(r["id"], r["parent"], r["commit"], r["tree"])
                for r in read_jsonl(staging, "nodes.jsonl", path)
            ]
        except KeyError as exc:
            raise EvolveError(f"{path}: nodes.jsonl has a row without {exc}") from None
        for item in recorded:
            tree_of(store, item.commit, item.node, path)  # a commit the code does not hold: one clear line
        yield store, recorded, list(read_jsonl(staging, "evaluations.jsonl", path))


def _parent_commit(store: CodeStore, commit: str) -> str | None:
    try:
        return git.Git().execute(
            ["git", f"--git-dir={store.path}", "rev-parse", "--verify", "-q", f"{commit}^1"]
        )
    except git.GitCommandError:
        return None  # a root commit


def _chain(recorded: list[_Recorded], node: str | None) -> list[_Recorded]:
    if node is None:
        return recorded
    by_id = {r.node: r for r in recorded}
    if node not in by_id:
        raise EvolveError(f"no node {node!r} in this run or bundle")
    chain = [by_id[node]]
    while chain[-1].parent is not None:
        chain.append(by_id[chain[-1].parent])
    return list(reversed(chain))


@dataclass(frozen=True)
class Verified:
    """The code checks of a lineage and its digest over the rebuilt tree hashes (not the recorded ones)."""

    checks: list[CodeCheck]
    digest: str


def verify_code(path: Path | str, node: str | None = None) -> list[CodeCheck]:
    """Rebuild every node's code (or the lineage of `node`) from its files and check its tree hash."""
    return verify(path, node).checks


def verify(path: Path | str, node: str | None = None) -> Verified:
    """`verify_code`, and the lineage digest of what was rebuilt (see evolve/archive/digest.py)."""
    checks = []
    with (
        _source(Path(path)) as (store, recorded, evaluations),
        tempfile.TemporaryDirectory(prefix="evolve-rebuild-") as tmp,
    ):
        rebuilt_store = CodeStore.init(Path(tmp) / "rebuilt.git")
        commits = {r.node: r.commit for r in recorded}
        rebuilt: dict[str, str] = {}
        for index, item in enumerate(_chain(recorded, node)):
            files = store.checkout(item.commit, Path(tmp) / f"node-{index}")
            parent = rebuilt.get(item.parent) if item.parent is not None else None
            rebuilt[item.node] = rebuilt_store.commit_dir(files, parent, f"rebuilt {item.node}", 0)
            expected_parent = commits.get(item.parent) if item.parent is not None else None
            parent_ok = _parent_commit(store, item.commit) == expected_parent
            checks.append(
                CodeCheck(item.node, item.tree, rebuilt_store.tree_hash(rebuilt[item.node]), parent_ok)
            )
    parents = {r.node: r.parent for r in recorded}
    claims = [NodeClaim(c.node, parents[c.node], c.rebuilt_tree) for c in checks]
    lineage = {c.node for c in checks}
    digest = lineage_digest(claims, [e for e in evaluations if evaluation_claim(e)[0] in lineage])
    return Verified(checks, digest)


EvaluateOne = Callable[[Run, Evaluation, Job], Replayed]
"""Re-run one recorded evaluation (its job's exchanges replayed) in a scratch run; the new outcome."""


def rerun(run: Run, evaluate_one: EvaluateOne, node: str | None = None) -> list[RerunCheck]:
    """Re-run the recorded evaluations of `run` (one node's, or all) and compare outcomes per node."""
    checks: dict[str, RerunCheck] = {}
    for evaluation, job in replayable(run, node):
        check = checks.get(evaluation.node) or RerunCheck(evaluation.node, 0, 0)
        if job is None or not run.exchanges_file(job.id).is_file():
            checks[evaluation.node] = replace(check, skipped=(*check.skipped, evaluation.task))
            continue
        replayed = evaluate_one(run, evaluation, job)
        if replayed.outcome == evaluation.outcome:
            check = replace(check, compared=check.compared + 1, matching=check.matching + 1)
        else:
            mismatch = Mismatch(evaluation.task, evaluation.outcome, replayed.outcome, replayed.detail)
            check = replace(check, compared=check.compared + 1, mismatches=(*check.mismatches, mismatch))
        checks[evaluation.node] = check
    return list(checks.values())


@contextmanager
def scratch_copy(path: Path | str) -> Iterator[Run]:
    """A throw-away run imported from a bundle or copied from a run directory (re-runs write into it)."""
    path = Path(path)
    with tempfile.TemporaryDirectory(prefix="evolve-rerun-") as tmp:
        if path.is_dir():
            with Run.open(path) as source:
                from evolve.archive.lineage import export_lineage

                path = export_lineage(source, Path(tmp) / "source.evolve.tar.gz")
        with import_bundle(path, Path(tmp) / "run") as run:
            yield run


@contextmanager
def docker_evaluator(run: Run) -> Iterator[EvaluateOne]:
    """Re-runs evaluations as `evolve.engine.evaluate` does (Docker sandboxes, the run's suite and step cap),
    with a gateway that answers from the run's recorded exchanges instead of a model."""
    from evolve.engine.evaluate import EvalSettings, evaluate
    from evolve.llm.gateway import Gateway
    from evolve.sandbox.factory import DockerSandboxes
    from evolve.sandbox.types import SandboxLimits
    from evolve.tasks import load_suite

    config = run.config
    suite = load_suite(config.tasks.suite)
    box = config.sandbox
    limits = SandboxLimits(
        cpus=box.cpus,
        memory=box.memory,
        pids=box.pids,
        wall_clock_s=box.timeout_s,
        output_limit_bytes=box.output_limit_bytes,
    )
    settings = EvalSettings(budget_steps=config.budget.agent_steps, infra_retries=0)
    with Gateway(replay_from=run.path / "exchanges") as gateway:

        def evaluate_one(scratch: Run, evaluation: Evaluation, job: Job) -> Replayed:
            result = evaluate(
                scratch,
                evaluation.node,
                suite.get(evaluation.task),
                sandboxes=DockerSandboxes(scratch.id, limits),
                gateway=ReplayChannels(gateway, job.id),
                settings=settings,
            )
            return Replayed(result.outcome, result.detail)

        yield evaluate_one
