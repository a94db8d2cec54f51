"""Importers for published DGM (jennyzzt/dgm) and HGM (metauto-ai/HGM) run directories.

Both engines write one directory per node, named by its run id (a timestamp; the root is
`initial`), holding `metadata.json` (`parent_commit`, `overall_performance` with the resolved,
unresolved and empty-patch task ids, and the diagnosis `problem_statement` that produced the node)
and `model_patch.diff`, a `git diff` of the node's code against its parent's. A node's code is
therefore the initial code plus the chain of patches from the root; each node is rebuilt by
checking out its (already rebuilt) parent and applying its own patch.

Outcomes: a resolved id is `pass` and an unresolved id `fail`. An empty-patch id is `error`: the
agent ended without changing the repository, which this engine calls an agent error (and which both
engines count as a failure, since it is among their submitted instances). An id HGM lists as
submitted but in none of the three lists (SWE-bench's evaluation errors) is also `error`, for the
same reason. An id listed twice (DGM's `num_swe_evals > 1`) is two attempts.

Nothing is skipped silently: a patch that does not apply makes the node invalid (its code is then
its parent's, unchanged) and is reported as an `ImportProblem` with the node id, as are its
descendants (their code cannot be rebuilt) and any node whose parent directory is missing.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path

from evolve.archive.bundlefiles import staged_run
from evolve.archive.code import NODE_ID
from evolve.archive.dgm_polyglot import as_dgm_polyglot, is_polyglot_run, refuse_other_engine
from evolve.archive.store import Run
from evolve.config import PolicyConfig, RunConfig, RunSection
from evolve.errors import EvolveError

ROOT = "initial"


@dataclass(frozen=True)
class ImportProblem:
    """A node the import could not reproduce faithfully, and why."""

    node: str
    reason: str


@dataclass(frozen=True)
class ImportReport:
    """The imported run (open; the caller closes it) and what could not be reproduced."""

    run: Run
    source: str
    nodes: int
    evaluations: int
    problems: tuple[ImportProblem, ...]
    warnings: tuple[str, ...] = ()
    """What the import worked around (e.g. an incomplete last metadata entry)."""


@dataclass(frozen=True)
class _Source:
    """One node directory as the source engine left it."""

    id: str
    parent: str | None
    metadata: dict
    patch: str | None
    origin: str
    rejected: str | None = None
    """Why the source engine itself kept the node out of its archive/tree (None: it kept it)."""


def load_concatenated_json(path: Path) -> list[dict]:
    """The objects of a file of concatenated (multi-line) JSON objects, `Infinity` allowed.

    DGM's `dgm_metadata.jsonl` and HGM's `hgm_metadata.jsonl` are written with `indent=2`, so they
    are not JSON Lines; HGM writes `Infinity` for the mean utility of a node without evaluations.
    """
    objects, truncated = load_metadata_entries(path)
    if truncated is not None:
        raise EvolveError(truncated)
    return objects


def load_metadata_entries(path: Path) -> tuple[list[dict], str | None]:
    """`load_concatenated_json`, but a last entry cut short (a crash mid-append) is left out and
    described in the second value instead of refused; damage before the last entry is refused."""
    text = Path(path).read_text(encoding="utf-8")
    decoder = json.JSONDecoder()
    objects: list[dict] = []
    position = 0
    while True:
        while position < len(text) and text[position].isspace():
            position += 1
        if position == len(text):
            return objects, None
        try:
            value, position = decoder.raw_decode(text, position)
        except json.JSONDecodeError as exc:
            # Entries are written with indent=2, so only a complete top-level entry has a `}` at the
            # start of a line: none after here means the last entry was cut short.
            if "\n}" not in text[position:] and text[position] == "{":
                return objects, (
                    f"{path}: its last entry is incomplete (cut short at byte {len(text)}, "
                    f"{exc.msg}); imported its {len(objects)} complete entries"
                )
            raise EvolveError(f"{path}: not concatenated JSON objects ({exc})") from None
        objects.append(value)


def _read_node_dir(directory: Path) -> tuple[dict, str | None]:
    try:
        metadata = json.loads((directory / "metadata.json").read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise EvolveError(f"{directory / 'metadata.json'}: invalid JSON ({exc})") from None
    patch_file = directory / "model_patch.diff"
    return metadata, patch_file.read_text(encoding="utf-8") if patch_file.is_file() else None


def _node_dirs(run_dir: Path) -> dict[str, Path]:
    if not (run_dir / ROOT / "metadata.json").is_file():
        raise EvolveError(f"{run_dir}: no {ROOT}/metadata.json (not a DGM/HGM run directory)")
    return {d.name: d for d in sorted(run_dir.iterdir()) if (d / "metadata.json").is_file()}


def _map_ids(ids: list[str]) -> dict[str, str]:
    """Their node ids → ours: unchanged where they are valid ids (timestamps and `initial` are)."""
    mapped: dict[str, str] = {}
    for theirs in ids:
        ours = theirs if NODE_ID.match(theirs) else re.sub(r"[^A-Za-z0-9_-]", "-", theirs).lstrip("_-")[:60]
        ours = ours or "node"
        candidate, suffix = ours, 1
        while candidate in mapped.values():
            candidate, suffix = f"{ours[:58]}-{suffix}", suffix + 1
        mapped[theirs] = candidate
    return mapped


def _apply(code: Path, patch: str, scratch: Path) -> str | None:
    """Apply `patch` to the files in `code`; the error text if it does not apply."""
    subprocess.run(["git", "init", "-q", str(code)], check=True, capture_output=True)
    patch_file = scratch / "model_patch.diff"
    patch_file.write_text(patch, encoding="utf-8")
    done = subprocess.run(
        ["git", "apply", "--whitespace=nowarn", str(patch_file)],
        check=False,
        cwd=code,
        capture_output=True,
        text=True,
    )
    shutil.rmtree(code / ".git")
    if done.returncode == 0:
        return None
    return " ".join(done.stderr.split())[:300] or f"git apply exited {done.returncode}"


def _record_performance(run: Run, node_id: str, performance: dict) -> int:
    """One evaluation per listed id (see the module docstring for the outcome of each list)."""
    listed = {
        "pass": performance.get("total_resolved_ids") or [],
        "fail": performance.get("total_unresolved_ids") or [],
        "error": performance.get("total_emptypatch_ids") or [],
    }
    unclassified = Counter(performance.get("total_submitted_ids") or [])
    unclassified.subtract(Counter(task for ids in listed.values() for task in ids))
    listed["error"] = [*listed["error"], *sorted(unclassified.elements())]
    recorded = 0
    for outcome, tasks in listed.items():
        for task in tasks:
            run.record_evaluation(node_id, str(task), outcome)
            recorded += 1
    return recorded


def _check_links(root: Path) -> None:
    """Refuse initial code with a symbolic link that leaves the tree (absolute, or `..` past the root):
    copied, it would import a host file; links inside the tree are kept as links, never followed."""
    for directory, dirnames, filenames in os.walk(root):  # os.walk does not descend into linked dirs
        for name in [*dirnames, *filenames]:
            path = Path(directory) / name
            if not path.is_symlink():
                continue
            target = os.readlink(path)
            resolved = os.path.normpath(os.path.join(os.path.relpath(directory, root), target))
            if os.path.isabs(target) or resolved == ".." or resolved.startswith("../"):
                raise EvolveError(
                    f"initial code {root}: {path.relative_to(root)} is a symbolic link out of "
                    f"the tree (to {target}); refusing to import it"
                )


def _import(
    sources: dict[str, _Source], initial_code: Path, dest: Path, kind: str, warnings: tuple[str, ...] = ()
) -> ImportReport:
    """Import the nodes into a new run at `dest`; on any failure nothing is left at `dest`."""
    initial_code = Path(initial_code)
    if not initial_code.is_dir():
        raise EvolveError(f"initial code {initial_code} is not a directory")
    _check_links(initial_code)
    with staged_run(dest) as building:
        report = _import_into(sources, initial_code, building, dest.name, kind)
    return replace(report, run=Run.open(dest, writer=True), warnings=warnings)


def _import_into(
    sources: dict[str, _Source], initial_code: Path, dest: Path, name: str, kind: str
) -> ImportReport:
    """The import, built at `dest` and closed again (a staging directory the run named `name` moves from)."""
    ids = _map_ids(list(sources))
    problems: list[ImportProblem] = []
    children: dict[str | None, list[str]] = {}
    for source in sources.values():
        if source.parent is not None and source.parent not in sources:
            problems.append(
                ImportProblem(source.id, f"parent {source.parent!r} has no node directory; not imported")
            )
            continue
        children.setdefault(source.parent, []).append(source.id)
    name = re.sub(r"[^A-Za-z0-9._-]", "-", name).lstrip("._-") or f"{kind}-import"
    config = RunConfig(run=RunSection(name=name), policy=PolicyConfig(name=kind))
    run = Run.create(dest, config)
    run.set_meta("imported_from", json.dumps({"format": kind, "ids": ids}))
    unbuilt: set[str] = set()
    evaluations = 0
    try:
        with tempfile.TemporaryDirectory(prefix=f"evolve-import-{kind}-") as tmp:
            scratch = Path(tmp)
            queue = [ROOT]
            while queue:
                source = sources[queue.pop(0)]
                queue.extend(sorted(children.get(source.id, [])))
                status, reason = ("valid", None) if source.rejected is None else ("invalid", source.rejected)
                code = scratch / "code"
                shutil.rmtree(code, ignore_errors=True)
                if source.parent is None:
                    shutil.copytree(initial_code, code, symlinks=True)
                else:
                    run.checkout(ids[source.parent], code)
                    if source.parent in unbuilt:
                        status, reason = "invalid", f"parent {source.parent} could not be rebuilt"
                        unbuilt.add(source.id)
                    elif source.patch is None:
                        status, reason = "invalid", "no model_patch.diff"
                    elif not source.patch.strip():
                        status, reason = "invalid", reason or "empty model_patch.diff (no change)"
                    elif (error := _apply(code, source.patch, scratch)) is not None:
                        status, reason = "invalid", f"model_patch.diff does not apply: {error}"
                        unbuilt.add(source.id)
                    if source.id in unbuilt and reason is not None:
                        problems.append(ImportProblem(source.id, reason))
                instructions = source.metadata.get("problem_statement") or None
                parent = ids[source.parent] if source.parent is not None else None
                run.add_node(
                    code,
                    parent=parent,
                    origin=source.origin,
                    status=status,
                    reason=reason,
                    instructions=instructions,
                    node_id=ids[source.id],
                )
                evaluations += _record_performance(
                    run, ids[source.id], source.metadata.get("overall_performance") or {}
                )
        return ImportReport(run, kind, len(run.nodes()), evaluations, tuple(problems))
    finally:
        run.close()


def import_dgm_run(run_dir: Path | str, initial_code: Path | str, dest: Path | str) -> ImportReport:
    """Import a DGM output directory (`output_dgm/<run>/`) into a new run at `dest`.

    `initial_code` is the code the run started from (the DGM repository's agent files). A node
    without `overall_performance` (DGM stopped before evaluating it, e.g. on an empty patch) or one
    that `dgm_metadata.jsonl` lists as a child but not as compiled is invalid, as DGM kept it out of
    its archive.
    """
    run_dir = Path(run_dir)
    refuse_other_engine(run_dir, "dgm")
    generations, truncated = (
        load_metadata_entries(run_dir / "dgm_metadata.jsonl")
        if (run_dir / "dgm_metadata.jsonl").is_file()
        else ([], None)
    )
    children = {c for g in generations for c in g.get("children", [])}
    compiled = {c for g in generations for c in g.get("children_compiled", [])}
    sources: dict[str, _Source] = {}
    for node_id, directory in _node_dirs(run_dir).items():
        metadata, patch = _read_node_dir(directory)
        rejected = None
        if "overall_performance" not in metadata:
            rejected = "DGM recorded no overall_performance (not evaluated)"
        elif node_id in children and node_id not in compiled:
            rejected = "DGM did not admit it to its archive (not compiled)"
        parent = None if node_id == ROOT else metadata.get("parent_commit", ROOT)
        sources[node_id] = _Source(node_id, parent, metadata, patch, f"dgm:{node_id}", rejected)
    warnings = () if truncated is None else (truncated,)
    if not is_polyglot_run(s.metadata for s in sources.values()):
        return _import(sources, Path(initial_code), Path(dest), "dgm", warnings)
    with tempfile.TemporaryDirectory(prefix="evolve-import-polyglot-") as tmp:
        polyglot_code = as_dgm_polyglot(run_dir, Path(initial_code), Path(tmp) / "code")
        return _import(sources, polyglot_code, Path(dest), "dgm", warnings)


def import_hgm_run(run_dir: Path | str, initial_code: Path | str | None, dest: Path | str) -> ImportReport:
    """Import an HGM output directory into a new run at `dest`.

    The tree is the last entry of `hgm_metadata.jsonl` (HGM's integer node ids, kept in each node's
    origin as `hgm:<commit id>#<id>`). A node directory that is not in that tree (HGM's
    `sample_child` failed, so it never joined the tree) is imported as invalid. `initial_code`
    defaults to `RUN_DIR/initial/src`, where HGM copies the initial agent. The root's evaluations are
    every id in its `metadata.json` (HGM's cached full evaluation), not only the subset that
    `init_evaluated_tasks.json` says the search drew on.
    """
    run_dir = Path(run_dir)
    refuse_other_engine(run_dir, "hgm")
    initial_code = Path(initial_code) if initial_code is not None else run_dir / ROOT / "src"
    metadata_file = run_dir / "hgm_metadata.jsonl"
    if not metadata_file.is_file():
        raise EvolveError(
            f"{metadata_file}: missing; it holds HGM's tree (which node joined it, under which "
            "parent), so the run cannot be imported without it: copy it from the HGM output directory"
        )
    entries, truncated = load_metadata_entries(metadata_file)
    if not entries:
        raise EvolveError(f"{metadata_file}: holds no complete entry, so HGM's tree is unknown")
    tree_nodes = entries[-1]["nodes"] if entries else []
    commit_of = {0: ROOT, **{int(n["id"]): str(n["commit_id"]) for n in tree_nodes}}
    tree_parent = {str(n["commit_id"]): commit_of.get(n["parent_id"]) for n in tree_nodes}
    hgm_id = {commit: number for number, commit in commit_of.items()}
    sources: dict[str, _Source] = {}
    for node_id, directory in _node_dirs(run_dir).items():
        metadata, patch = _read_node_dir(directory)
        parent = None if node_id == ROOT else metadata.get("parent_commit", tree_parent.get(node_id, ROOT))
        rejected = None
        if node_id != ROOT and node_id not in tree_parent:
            rejected = "not in HGM's tree (sample_child failed)"
        elif node_id in tree_parent and tree_parent[node_id] != parent:
            raise EvolveError(
                f"{directory}: parent_commit {parent!r} but hgm_metadata.jsonl says "
                f"parent {tree_parent[node_id]!r}"
            )
        origin = f"hgm:{node_id}" + (f"#{hgm_id[node_id]}" if node_id in hgm_id else "")
        sources[node_id] = _Source(node_id, parent, metadata, patch, origin, rejected)
    return _import(sources, initial_code, Path(dest), "hgm", () if truncated is None else (truncated,))
