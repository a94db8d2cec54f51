"""Lineage bundles: a run (or one node's lineage) as one portable file, and back.

A bundle is a gzipped tar holding `manifest.json`, `run.toml`, `code.bundle` (a git bundle of the
nodes' refs), `nodes.jsonl` (with each node's git tree hash), `evaluations.jsonl`, `jobs.jsonl`,
every recorded model exchange of those jobs under `exchanges/` (an expansion's diagnose, modify and
validate channels each have their own file, `job-<id>-<step>.jsonl`) and, unless left out, every
job's log directory under `logs/` (transcripts, outputs, diffs). Importing reproduces the node ids,
commits (hence tree hashes) and results exactly, and checks the tree hashes on the way in.
"""

from __future__ import annotations

import json
import re
import shutil
import tarfile
import tempfile
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path, PurePath
from typing import TypeVar

from evolve.archive.best import run_best
from evolve.archive.bundlefiles import extract, fetch_code, read_jsonl, staged_run, tree_of
from evolve.archive.digest import NodeClaim, check_expected, lineage_digest
from evolve.archive.importers import ImportProblem, ImportReport, import_dgm_run, import_hgm_run
from evolve.archive.records import Evaluation, Job, Node
from evolve.archive.store import Run
from evolve.archive.tree import record_tasks, recorded_tasks
from evolve.config import parse_config
from evolve.errors import EvolveError

__all__ = [
    "ImportProblem",
    "ImportReport",
    "export_lineage",
    "import_bundle",
    "import_dgm_run",
    "import_hgm_run",
]

BUNDLE_FORMAT = "evolve-bundle"
BUNDLE_VERSION = 1
_Row = TypeVar("_Row")


def _write_jsonl(path: Path, rows: list[dict]) -> None:
    with path.open("w", encoding="utf-8") as out:
        for row in rows:
            out.write(json.dumps(row, sort_keys=True) + "\n")


def lineage_ids(run: Run, node_id: str) -> list[str]:
    """The ids of `node_id` and its ancestors, root first."""
    return [n.id for n in _lineage(run, node_id)]


def _lineage(run: Run, node_id: str) -> list[Node]:
    chain = [run.node(node_id)]
    while chain[-1].parent is not None:
        chain.append(run.node(chain[-1].parent))
    return list(reversed(chain))


def job_exchanges(run: Run, job_id: int) -> list[Path]:
    """Every exchange file of one job: `job-<id>.jsonl` and each channel's `job-<id>-<step>.jsonl`."""
    directory = run.path / "exchanges"
    return sorted({*directory.glob(f"job-{job_id}.jsonl"), *directory.glob(f"job-{job_id}-*.jsonl")})


@dataclass(frozen=True)
class LeftOut:
    """What a bundle without logs leaves behind: the jobs' log directories, their files and bytes."""

    directories: int
    files: int
    bytes: int

    def line(self) -> str:
        return (
            f"left out {self.directories} job log directories ({self.files} files, {self.bytes:,} bytes: "
            "transcripts, outputs, diffs); the nodes, results, jobs and model exchanges are all in the bundle"
        )


def job_logs(run: Run, jobs: list[Job]) -> list[Path]:
    """The log directories (`logs/job-<id>/`) of `jobs` that exist."""
    return [logs for job in jobs if (logs := run.path / "logs" / f"job-{job.id}").is_dir()]


def left_out(run: Run, node: str | None = None) -> LeftOut:
    """What `export_lineage(..., with_logs=False)` of the same nodes does not carry."""
    ids = {n.id for n in (run.nodes() if node is None else _lineage(run, node))}
    directories = job_logs(run, [j for j in run.jobs() if j.node in ids])
    files = [f for d in directories for f in d.rglob("*") if f.is_file() and not f.is_symlink()]
    return LeftOut(len(directories), len(files), sum(f.stat().st_size for f in files))


def export_lineage(run: Run, dest: Path | str, node: str | None = None, *, with_logs: bool = True) -> Path:
    """Write a bundle of the whole run, or of `node` and its ancestors, to `dest`: every exchange
    file of every exported job and, with `with_logs` (the default), each job's log directory
    (`logs/job-<id>/`: transcripts, outputs, diffs)."""
    dest = Path(dest)
    nodes = run.nodes() if node is None else _lineage(run, node)
    if not nodes:
        raise EvolveError(f"run {run.path} has no nodes to export")
    ids = {n.id for n in nodes}
    evaluations = [e for e in run.evaluations() if e.node in ids]
    jobs = [j for j in run.jobs() if j.node in ids]
    with tempfile.TemporaryDirectory(prefix="evolve-export-") as tmp:
        staging = Path(tmp)
        run.code.bundle(staging / "code.bundle", [n.id for n in nodes])
        node_rows = [{**asdict(n), "tree": run.code.tree_hash(n.commit)} for n in nodes]
        _write_jsonl(staging / "nodes.jsonl", node_rows)
        _write_jsonl(staging / "evaluations.jsonl", [asdict(e) for e in evaluations])
        _write_jsonl(staging / "jobs.jsonl", [asdict(j) for j in jobs])
        (staging / "run.toml").write_text((run.path / "run.toml").read_text())
        (staging / "exchanges").mkdir()
        for job in jobs:
            for recorded in job_exchanges(run, job.id):
                (staging / "exchanges" / recorded.name).write_bytes(recorded.read_bytes())
        for logs in job_logs(run, jobs) if with_logs else []:
            shutil.copytree(logs, staging / "logs" / logs.name, symlinks=True)
        manifest = {
            "format": BUNDLE_FORMAT,
            "version": BUNDLE_VERSION,
            "run_id": run.id,
            "exported": time.time(),
            "lineage_of": node,
            "nodes": [n.id for n in nodes],
            "search_tasks": None if (tasks := recorded_tasks(run)) is None else sorted(tasks),
            "logs": with_logs,
            "best": None if (best := run_best(run)) is None else best.node,
        }
        (staging / "manifest.json").write_text(json.dumps(manifest, indent=2))
        dest.parent.mkdir(parents=True, exist_ok=True)
        with tarfile.open(dest, "w:gz") as tar:
            for item in sorted(staging.iterdir()):
                tar.add(item, arcname=item.name)
    return dest


def _read_manifest(staging: Path, bundle: Path) -> dict:
    try:
        manifest = json.loads((staging / "manifest.json").read_text())
    except json.JSONDecodeError as exc:
        raise EvolveError(f"{bundle}: manifest.json is not JSON ({exc.msg}); the bundle is damaged") from None
    if (
        not isinstance(manifest, dict)
        or manifest.get("format") != BUNDLE_FORMAT
        or manifest.get("version") != BUNDLE_VERSION
    ):
        found = (
            manifest
            if not isinstance(manifest, dict)
            else f"{manifest.get('format')} v{manifest.get('version')}"
        )
        raise EvolveError(
            f"{bundle}: manifest.json says bundle format {found}, not {BUNDLE_FORMAT} v{BUNDLE_VERSION}"
        )
    return manifest


def _imported_log_path(run: Run, log_path: str | None, home: Path) -> str | None:
    """Where a recorded log directory is in the imported run at `home` (built at `run.path`):
    `logs/job-<id>` if the bundle carried it.

    The recorded path is on the machine that made the run, so it is never kept as it is."""
    if log_path is None:
        return None
    source = PurePath(log_path)
    if source.parent.name != "logs" or not re.fullmatch(r"job-\d+", source.name):
        return None
    if not (run.path / "logs" / source.name).is_dir():
        return None
    return str(Path(home).absolute() / "logs" / source.name)


def _record(row: dict, kind: type[_Row], name: str, bundle: Path) -> _Row:
    try:
        return kind(**row)
    except TypeError as exc:
        raise EvolveError(f"{bundle}: {name} has a row this version cannot read ({exc})") from None


def _node_row(row: dict, bundle: Path) -> tuple[Node, str]:
    """A row of a bundle's nodes.jsonl: the node and its recorded tree hash."""
    fields = dict(row)
    tree = fields.pop("tree", None)
    if not isinstance(tree, str):
        raise EvolveError(f"{bundle}: nodes.jsonl has a row without a tree hash (node {row.get('id')!r})")
    return _record(fields, Node, "nodes.jsonl", bundle), tree


def import_bundle(bundle: Path | str, dest: Path | str, *, expect: str | None = None) -> Run:
    """Create a run at `dest` from a bundle: same node ids, commits, tree hashes and results.

    `expect`: the lineage digest the bundle must have (see evolve/archive/digest.py). On any failure
    nothing is left at `dest`."""
    bundle, dest = Path(bundle), Path(dest)
    with tempfile.TemporaryDirectory(prefix="evolve-import-") as tmp, staged_run(dest) as building:
        staging = Path(tmp)
        extract(bundle, staging)
        manifest = _read_manifest(staging, bundle)
        config = parse_config((staging / "run.toml").read_text(), f"{bundle}:run.toml")
        nodes = [_node_row(row, bundle) for row in read_jsonl(staging, "nodes.jsonl", bundle)]
        evaluations = [
            _record({k: v for k, v in row.items() if k != "id"}, Evaluation, "evaluations.jsonl", bundle)
            for row in read_jsonl(staging, "evaluations.jsonl", bundle)
        ]
        jobs = [_record(row, Job, "jobs.jsonl", bundle) for row in read_jsonl(staging, "jobs.jsonl", bundle)]
        with Run.create(building, config) as run:
            run.set_meta("imported_from", json.dumps({"bundle": str(bundle), "run_id": manifest["run_id"]}))
            if manifest.get("search_tasks") is not None:  # the copy counts results as the original did
                record_tasks(run, manifest["search_tasks"])
            fetch_code(run.code, staging, bundle)
            for row in nodes:
                tree = tree_of(run.code, row[0].commit, row[0].id, bundle)
                if tree != row[1]:
                    raise EvolveError(f"{bundle}: node {row[0].id} has tree {tree}, the bundle says {row[1]}")
            check_expected(
                lineage_digest([NodeClaim(n.id, n.parent, tree) for n, tree in nodes], evaluations),
                expect,
                str(bundle),
            )
            for node, _tree in nodes:
                run.adopt_node(node)
            for directory in ("exchanges", "logs"):
                if (staging / directory).is_dir():
                    shutil.copytree(
                        staging / directory, run.path / directory, symlinks=True, dirs_exist_ok=True
                    )
            for evaluation in evaluations:
                log_path = _imported_log_path(run, evaluation.log_path, dest)
                run.adopt_evaluation(replace(evaluation, log_path=log_path))
            for job in jobs:
                run.adopt_job(job)
    return Run.open(dest, writer=True)
