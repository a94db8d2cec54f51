"""Lineage bundles: a run (or one node's lineage) as one portable file, and back.

A bundle is a gzipped tar holding `manifest.json`, `run.toml`, `code.bundle` (a git bundle of the
nodes' refs), `nodes.jsonl` (with each node's git tree hash), `evaluations.jsonl`, `jobs.jsonl` and
the recorded model exchanges of those jobs under `exchanges/`. Importing reproduces the node ids,
commits (hence tree hashes) and results exactly, and checks the tree hashes on the way in.
"""

from __future__ import annotations

import json
import tarfile
import tempfile
import time
from dataclasses import asdict
from pathlib import Path

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


def _write_jsonl(path: Path, rows: list[dict]) -> None:
    with path.open("w", encoding="utf-8") as out:
        for row in rows:
            out.write(json.dumps(row, sort_keys=True) + "\n")


def _read_jsonl(path: Path) -> list[dict]:
    with path.open(encoding="utf-8") as lines:
        return [json.loads(line) for line in lines if line.strip()]


def _lineage(run: Run, node_id: str) -> list[Node]:
    chain = [run.node(node_id)]
    while chain[-1].parent is not None:
        chain.append(run.node(chain[-1].parent))
    return list(reversed(chain))


def export_lineage(run: Run, dest: Path | str, node: str | None = None) -> Path:
    """Write a bundle of the whole run, or of `node` and its ancestors, to `dest`."""
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
            recorded = run.exchanges_file(job.id)
            if recorded.exists():
                (staging / "exchanges" / recorded.name).write_bytes(recorded.read_bytes())
        manifest = {
            "format": BUNDLE_FORMAT,
            "version": BUNDLE_VERSION,
            "run_id": run.id,
            "exported": time.time(),
            "lineage_of": node,
            "nodes": [n.id for n in nodes],
            "search_tasks": None if (tasks := recorded_tasks(run)) is None else sorted(tasks),
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
    except (FileNotFoundError, json.JSONDecodeError) as exc:
        raise EvolveError(f"{bundle}: not an evolve bundle ({exc})") from None
    if manifest.get("format") != BUNDLE_FORMAT or manifest.get("version") != BUNDLE_VERSION:
        raise EvolveError(
            f"{bundle}: bundle format {manifest.get('format')} v{manifest.get('version')} is not "
            f"{BUNDLE_FORMAT} v{BUNDLE_VERSION}"
        )
    return manifest


def import_bundle(bundle: Path | str, dest: Path | str) -> Run:
    """Create a run at `dest` from a bundle: same node ids, commits, tree hashes and results."""
    bundle, dest = Path(bundle), Path(dest)
    if not bundle.is_file():
        raise EvolveError(f"{bundle}: no such bundle file")
    with tempfile.TemporaryDirectory(prefix="evolve-import-") as tmp:
        staging = Path(tmp)
        try:
            with tarfile.open(bundle, "r:*") as tar:
                tar.extractall(staging, filter="data")
        except tarfile.TarError as exc:
            raise EvolveError(f"{bundle}: not an evolve bundle ({exc})") from None
        manifest = _read_manifest(staging, bundle)
        config = parse_config((staging / "run.toml").read_text(), f"{bundle}:run.toml")
        run = Run.create(dest, config)
        try:
            run.set_meta("imported_from", json.dumps({"bundle": str(bundle), "run_id": manifest["run_id"]}))
            if manifest.get("search_tasks") is not None:  # the copy counts results as the original did
                record_tasks(run, manifest["search_tasks"])
            run.code.fetch_bundle(staging / "code.bundle")
            for row in _read_jsonl(staging / "nodes.jsonl"):
                tree = row.pop("tree")
                node = Node(**row)
                if run.code.tree_hash(node.commit) != tree:
                    raise EvolveError(f"{bundle}: node {node.id} has tree {run.code.tree_hash(node.commit)}, "
                                      f"the bundle says {tree}")
                run.adopt_node(node)
            for row in _read_jsonl(staging / "evaluations.jsonl"):
                row.pop("id", None)
                run.adopt_evaluation(Evaluation(**row))
            for row in _read_jsonl(staging / "jobs.jsonl"):
                run.adopt_job(Job(**row))
            for recorded in (staging / "exchanges").iterdir():
                (run.path / "exchanges" / recorded.name).write_bytes(recorded.read_bytes())
        except BaseException:
            run.close()
            raise
    return run
