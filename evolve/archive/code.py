"""Agent code as commits in a bare git repository, one ref `refs/nodes/<id>` per node.

Every operation is a git subprocess with no work tree and no shared index (trees are written by
`fast-import` under a scratch ref of their own), so many threads can commit, check out and diff at once.
What a commit holds is the directory's tree by the one rule of evolve.archive.codetree.
"""

from __future__ import annotations

import re
import subprocess
import uuid
from collections.abc import Mapping
from pathlib import Path

import git

from evolve.archive.codetree import Entry, import_stream, tree_entries, tree_id, write_entries
from evolve.errors import EvolveError

EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
NODE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")
_IDENTITY = {
    "GIT_AUTHOR_NAME": "evolve",
    "GIT_AUTHOR_EMAIL": "evolve@localhost",
    "GIT_COMMITTER_NAME": "evolve",
    "GIT_COMMITTER_EMAIL": "evolve@localhost",
}


def _ref(node_id: str) -> str:
    return f"refs/nodes/{node_id}"


class CodeStore:
    """The bare repository `code.git` of a run."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path).resolve()
        self._git = git.Git(str(self.path))

    @classmethod
    def init(cls, path: Path) -> CodeStore:
        git.Repo.init(str(path), bare=True, mkdir=True).close()
        return cls(path)

    def _run(self, *args: str, env: dict[str, str] | None = None, strip: bool = True) -> str:
        return self._git.execute(
            ["git", f"--git-dir={self.path}", *args],
            env=env,
            strip_newline_in_stdout=strip,
        )

    def commit_dir(self, src: Path, parent: str | None, message: str, timestamp: float) -> str:
        """Commit the tree of `src` (evolve.archive.codetree: its own ignore rules never apply) with `parent`
        as parent commit."""
        src = Path(src).resolve()
        if not src.is_dir():
            raise FileNotFoundError(f"code directory {src} does not exist")
        return self.commit_entries(tree_entries(src), parent, message, timestamp)

    def commit_entries(
        self, entries: Mapping[bytes, Entry], parent: str | None, message: str, timestamp: float
    ) -> str:
        """Commit exactly `entries`; the commit's tree is `tree_id(entries)` (checked)."""
        tree = self.write_tree(entries)
        date = f"@{int(timestamp)} +0000"
        commit_env = {**_IDENTITY, "GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date}
        parents = ["-p", parent] if parent else []
        return self._run("commit-tree", tree, *parents, "-m", message, env=commit_env)

    def write_tree(self, entries: Mapping[bytes, Entry]) -> str:
        """Store `entries` as a git tree (one `fast-import`, any file name) and return its id."""
        scratch = f"refs/evolve/scratch/{uuid.uuid4().hex}"
        subprocess.run(
            ["git", f"--git-dir={self.path}", "fast-import", "--quiet", "--done"],
            check=True,
            input=import_stream(scratch.encode(), entries) + b"done\n",
            capture_output=True,
        )
        try:
            tree = self._run("rev-parse", f"{scratch}^{{tree}}")
        finally:
            self._run("update-ref", "-d", scratch)
        if tree != tree_id(entries):
            raise EvolveError(f"git stored tree {tree} for entries whose tree id is {tree_id(entries)}")
        return tree

    def create_ref(self, node_id: str, commit: str) -> None:
        """Point `refs/nodes/<id>` at `commit`; fails if the ref already exists."""
        self._run("update-ref", _ref(node_id), commit, "")

    def delete_ref(self, node_id: str) -> None:
        self._run("update-ref", "-d", _ref(node_id))

    def refs(self) -> dict[str, str]:
        """Node id → commit for every node ref."""
        out = self._run("for-each-ref", "--format=%(refname) %(objectname)", "refs/nodes/")
        found = {}
        for line in out.splitlines():
            name, commit = line.split()
            found[name.removeprefix("refs/nodes/")] = commit
        return found

    def has_commit(self, commit: str) -> bool:
        try:
            self._run("cat-file", "-e", f"{commit}^{{commit}}")
        except git.GitCommandError:
            return False
        return True

    def tree_hash(self, commit: str) -> str:
        return self._run("rev-parse", f"{commit}^{{tree}}")

    def checkout(self, commit: str, dest: Path) -> Path:
        """Write the files of `commit` into `dest` (created if missing) byte for byte: no attribute, filter
        or line-ending rule of the tree's own changes them (evolve.archive.codetree.write_entries)."""
        return write_entries(self.entries(commit), Path(dest).resolve())

    def entries(self, commit: str) -> dict[bytes, Entry]:
        """The files and symlinks of `commit` (a gitlink, which holds no content here, is left out)."""
        listing = self._git.execute(
            ["git", f"--git-dir={self.path}", "ls-tree", "-r", "-z", "--full-tree", commit],
            stdout_as_string=False,
        )
        rows: list[tuple[bytes, str, bytes]] = []
        for line in filter(None, listing.split(b"\0")):
            meta, rel = line.split(b"\t", 1)
            mode, kind, sha = meta.split()
            if kind == b"blob":
                rows.append((rel, mode.decode(), sha))
        done = subprocess.run(
            ["git", f"--git-dir={self.path}", "cat-file", "--batch"],
            check=True,
            input=b"".join(sha + b"\n" for _, _, sha in rows),
            capture_output=True,
        )
        entries: dict[bytes, Entry] = {}
        out, at = done.stdout, 0
        for rel, blob_mode, _ in rows:
            header_end = out.index(b"\n", at)
            size = int(out[at:header_end].split()[2])
            entries[rel] = (blob_mode, out[header_end + 1 : header_end + 1 + size])
            at = header_end + 1 + size + 1
        return entries

    def diff(self, old: str | None, new: str) -> str:
        """Unified diff (git apply-able, binary included) from `old` (None: empty tree) to `new`."""
        return self._run(
            "diff", "--no-color", "--no-ext-diff", "--binary", old or EMPTY_TREE, new, strip=False
        )

    def changed_files(self, old: str | None, new: str) -> list[str]:
        """Paths added, changed or removed from `old` (None: empty tree) to `new`."""
        return (
            self._run("diff", "--no-renames", "--name-only", "-z", old or EMPTY_TREE, new)
            .strip("\0")
            .split("\0")
        )

    def read_file(self, commit: str, path: str) -> bytes | None:
        """A file's bytes at `commit`; None where the commit has no such file."""
        if path not in self._run("ls-tree", "-r", "-z", "--name-only", commit, "--", path).split("\0"):
            return None
        return self._git.execute(
            ["git", f"--git-dir={self.path}", "cat-file", "blob", f"{commit}:{path}"], stdout_as_string=False
        )

    def bundle(self, dest: Path, node_ids: list[str]) -> None:
        self._run("bundle", "create", str(Path(dest).resolve()), *[_ref(n) for n in node_ids])

    def fetch_bundle(self, bundle: Path) -> None:
        self._run("bundle", "verify", str(Path(bundle).resolve()))
        self._run("fetch", "--no-tags", str(Path(bundle).resolve()), "refs/nodes/*:refs/nodes/*")
