"""Reading a bundle's files, each failure one line that names the file and what is wrong.

Shared by `evolve import` (evolve/archive/lineage.py) and `evolve replay` (evolve/replay.py), and
`staged_run`, which every importer builds its run in, so that an import refused, failed or killed leaves
nothing at `--dest`.
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import tarfile
import uuid
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
        raise EvolveError(
            f"{bundle}: the archive is truncated (it ends before its end marker); copy or download it again"
        ) from None
    except (tarfile.TarError, zlib.error, OSError) as exc:
        raise EvolveError(f"{bundle}: not an evolve bundle (not a readable .tar.gz: {exc})") from None
    missing = [name for name in required if not (staging / name).is_file()]
    if missing:
        raise EvolveError(
            f"{bundle}: the bundle has no {' or '.join(missing)} (not a complete `evolve export` bundle)"
        )


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
                raise EvolveError(
                    f"{bundle}: {name} line {number} is not JSON ({exc.msg}); the bundle is damaged"
                ) from None
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
        raise EvolveError(
            f"{bundle}: code.bundle is damaged at node {node}'s commit {commit[:12]} "
            f"(git: {_git_reason(exc)})"
        ) from None
    raise EvolveError(
        f"{bundle}: nodes.jsonl names commit {commit[:12]} for node {node}, which code.bundle "
        "does not hold (nodes.jsonl is stale or from another export)"
    )


STAGING = ".importing-"
"""A run being imported is built in a hidden sibling of its destination,
`.<name>.importing-<pid>-<random>`."""


@contextmanager
def staged_run(dest: Path) -> Iterator[Path]:
    """Where an importer builds the run that appears at `dest` when the body ends: a sibling staging
    directory, renamed to `dest` in one step, so an import refused, failed or killed at any point leaves
    nothing at `dest` (a later import removes the staging directory a dead importer left). `dest` must be
    absent or an empty directory. The body must close every handle on the staged run before it ends."""
    dest = Path(dest).absolute()
    if (dest / "run.sqlite").exists():
        raise EvolveError(f"{dest} already holds a run")
    if dest.exists() and not (dest.is_dir() and not any(dest.iterdir())):
        raise EvolveError(f"{dest} exists and is not an empty directory; import into a new one")
    dest.parent.mkdir(parents=True, exist_ok=True)
    _sweep_staging(dest)
    staging = dest.parent / f".{dest.name}{STAGING}{os.getpid()}-{uuid.uuid4().hex[:8]}"
    try:
        yield staging
        os.rename(staging, dest)  # atomic; replaces `dest` only while it is an empty directory
    except OSError as exc:
        shutil.rmtree(staging, ignore_errors=True)
        if not staging.exists() and dest.exists() and any(dest.iterdir()):
            raise EvolveError(
                f"{dest} was filled by something else during the import; nothing was imported"
            ) from exc
        raise
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


def _sweep_staging(dest: Path) -> None:
    """Remove the staging directories that dead importers left beside `dest`."""
    for leftover in dest.parent.glob(f".{glob.escape(dest.name)}{STAGING}*"):
        pid = leftover.name.rsplit(STAGING, 1)[1].split("-")[0]
        if pid.isdigit() and not _alive(int(pid)):
            shutil.rmtree(leftover, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
