"""The agent's change, computed by the engine on the host from a copied-out tree
(docs/design.md §Trust boundaries).

Nothing of the agent's `.git` is used: both trees are written into a fresh bare repository with
`git fast-import` (no work tree, so no `.gitattributes`, filters, textconv or hooks apply), and git
runs with no system or global config. Symlinks are stored as symlinks (mode 120000, the link text),
never followed.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path

from evolve.archive.codetree import LINK, SKIPPED, Entry, import_stream, tree_entries
from evolve.errors import EvolveError

__all__ = [
    "LINK",
    "SKIPPED",
    "Entry",
    "TreeDiffFailed",
    "diff_entries",
    "diff_trees",
    "keep_unprotected",
    "tree_entries",
]


_SAFE_GIT = (
    "-c",
    "core.hooksPath=/dev/null",
    "-c",
    "diff.external=",
    "-c",
    "core.attributesFile=/dev/null",
    "-c",
    "core.quotePath=true",
)


class TreeDiffFailed(EvolveError):
    """git could not turn the two trees into a diff (an engine failure, not the agent's)."""


def diff_trees(before: Mapping[str, bytes], after: Mapping[bytes, Entry]) -> str:
    """A git binary diff turning the files `before` (the task's pristine repo) into the tree `after`."""
    return diff_entries({rel.encode(): ("100644", content) for rel, content in before.items()}, after)


def keep_unprotected(
    before: Mapping[bytes, Entry], after: Mapping[bytes, Entry], protected: Callable[[str], bool]
) -> tuple[dict[bytes, Entry], list[str]]:
    """`after` with every change to a protected path or a symlink undone (judged by path, on the engine's
    own trees), and the paths undone: for graders that apply the change as it comes (SWE-bench's)."""
    kept, dropped = dict(after), []
    for rel in sorted(set(before) | set(after)):
        old, new = before.get(rel), after.get(rel)
        if old == new:
            continue
        name = os.fsdecode(rel)
        if protected(name) or LINK in {old[0] if old else "", new[0] if new else ""}:
            dropped.append(name)
            if old is None:
                del kept[rel]
            else:
                kept[rel] = old
    return kept, dropped


def diff_entries(pristine: Mapping[bytes, Entry], after: Mapping[bytes, Entry]) -> str:
    """A git binary diff turning the tree `pristine` into the tree `after`."""
    # Only the paths that differ go to git: the diff of the two trees is the diff of these (blob ids are of
    # content alone), and its cost follows the change, not the repository's size.
    changed = {rel for rel in pristine.keys() | after.keys() if pristine.get(rel) != after.get(rel)}
    if not changed:  # what git would print for two equal trees, without its three processes
        return ""
    pristine = {rel: pristine[rel] for rel in changed if rel in pristine}
    after = {rel: after[rel] for rel in changed if rel in after}
    with tempfile.TemporaryDirectory(prefix="evolve-diff-") as tmp:
        git_dir = Path(tmp) / "repo.git"
        env = {
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": "/dev/null",
            "HOME": tmp,
            "GIT_DIR": str(git_dir),
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "LC_ALL": "C",
        }
        _git(env, ["init", "-q", "--bare", str(git_dir)])
        stream = import_stream(b"refs/heads/before", pristine) + import_stream(b"refs/heads/after", after)
        # a throwaway repository: no compression, no deltas (5x less CPU on a changed 10 MB repo)
        _git(
            env,
            ["-c", "core.compression=0", "fast-import", "--quiet", "--done", "--depth=0"],
            stream + b"done\n",
        )
        out = _git(
            env,
            [
                "diff-tree",
                "-r",
                "-p",
                "--binary",
                "--full-index",
                "--no-renames",
                "--no-ext-diff",
                "--no-textconv",
                "before",
                "after",
            ],
        )
    return out.decode("utf-8", errors="replace")


def _git(env: dict[str, str], args: list[str], stdin: bytes | None = None) -> bytes:
    done = subprocess.run(["git", *_SAFE_GIT, *args], input=stdin, env=env, capture_output=True, check=False)
    if done.returncode != 0:
        raise TreeDiffFailed(
            f"git {args[0]} failed ({done.returncode}): {done.stderr.decode(errors='replace')[-500:]}"
        )
    return done.stdout
