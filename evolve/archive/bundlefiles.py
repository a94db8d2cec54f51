"""Reading a bundle's files, each failure one line that names the file and what is wrong.

Shared by `evolve import` (evolve/archive/lineage.py) and `evolve replay` (evolve/replay.py), and
`removing_on_failure`, which every importer uses so that a refused import leaves nothing at `--dest`.
"""

from __future__ import annotations

import json
import shutil
import tarfile
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import git

from evolve.archive.code import CodeStore
from evolve.errors import EvolveError

REQUIRED = ("manifest.json", "run.toml", "code.bundle", "nodes.jsonl", "evaluations.jsonl", "jobs.jsonl")


def _git_reason(exc: git.GitCommandError) -> str:
    """git's own last words (its stderr), on one line."""
    lines = [line.strip() for line in str(exc.stderr or exc).splitlines() if line.strip()]
    return (lines[-1] if lines else str(exc)).removeprefix("stderr: ").strip("' ")[:200]


def extract(bundle: Path, staging: Path, required: tuple[str, ...] = REQUIRED) -> None:
    """Unpack `bundle` into `staging`; refuse a missing, truncated or incomplete one."""
    if not bundle.is_file():
        raise EvolveError(f"{bundle}: no such bundle file")
    try:
        with tarfile.open(bundle, "r:*") as tar:
            tar.extractall(staging, filter="data")
    except EOFError:
        raise EvolveError(f"{bundle}: the archive is truncated (it ends before its end marker); "
                          "copy or download it again") from None
    except (tarfile.TarError, zlib.error, OSError) as exc:
        raise EvolveError(f"{bundle}: not an evolve bundle (not a readable .tar.gz: {exc})") from None
    missing = [name for name in required if not (staging / name).is_file()]
    if missing:
        raise EvolveError(f"{bundle}: the bundle has no {' or '.join(missing)} (not a complete "
                          "`evolve export` bundle)")


def read_jsonl(staging: Path, name: str, bundle: Path) -> list[dict]:
    """The rows of one JSON Lines member of a bundle."""
    rows = []
    with (staging / name).open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise EvolveError(f"{bundle}: {name} line {number} is not JSON ({exc.msg}); the bundle is "
                                  "damaged") from None
            if not isinstance(row, dict):
                raise EvolveError(f"{bundle}: {name} line {number} is not a JSON object")
            rows.append(row)
    return rows


def fetch_code(store: CodeStore, staging: Path, bundle: Path) -> None:
    """Fetch the bundle's `code.bundle` into `store`; refuse a damaged git pack."""
    try:
        store.fetch_bundle(staging / "code.bundle")
    except git.GitCommandError as exc:
        raise EvolveError(f"{bundle}: code.bundle is damaged (git: {_git_reason(exc)})") from None


def tree_of(store: CodeStore, commit: str, node: str, bundle: Path) -> str:
    """The tree hash of a node's commit; refuse a commit that the bundle's code does not hold."""
    try:
        if store.has_commit(commit):
            return store.tree_hash(commit)
    except git.GitCommandError as exc:
        raise EvolveError(f"{bundle}: code.bundle is damaged at node {node}'s commit {commit[:12]} "
                          f"(git: {_git_reason(exc)})") from None
    raise EvolveError(f"{bundle}: nodes.jsonl names commit {commit[:12]} for node {node}, which code.bundle "
                      "does not hold (nodes.jsonl is stale or from another export)")


@contextmanager
def removing_on_failure(dest: Path) -> Iterator[None]:
    """On any failure inside, remove what was made at `dest` (all of it if it did not exist before)."""
    before = set(dest.iterdir()) if dest.is_dir() else None
    try:
        yield
    except BaseException:
        if before is None:
            shutil.rmtree(dest, ignore_errors=True)
        else:  # dest existed (empty, or Run.create refused it): remove only what this import made
            for entry in set(dest.iterdir()) - before:
                shutil.rmtree(entry) if entry.is_dir() and not entry.is_symlink() else entry.unlink()
        raise
