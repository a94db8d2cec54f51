"""Agent code as commits in a bare git repository, one ref `refs/nodes/<id>` per node.

Every operation is one git subprocess (GitPython's command layer) with its own temporary index,
so many threads can commit, check out and diff at once without sharing a work tree or an index.
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

import git

EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
NODE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")
_IGNORED = "__pycache__/\n*.pyc\n.pytest_cache/\n"
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
        (Path(path) / "info").mkdir(exist_ok=True)
        (Path(path) / "info" / "exclude").write_text(_IGNORED)
        return cls(path)

    def _run(self, *args: str, env: dict[str, str] | None = None, strip: bool = True) -> str:
        return self._git.execute(
            ["git", f"--git-dir={self.path}", *args],
            env=env,
            strip_newline_in_stdout=strip,
        )

    def commit_dir(self, src: Path, parent: str | None, message: str, timestamp: float) -> str:
        """Commit the files under `src` (git's excludes applied) with `parent` as parent commit."""
        src = Path(src).resolve()
        if not src.is_dir():
            raise FileNotFoundError(f"code directory {src} does not exist")
        with tempfile.TemporaryDirectory(prefix="evolve-index-") as tmp:
            env = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
            self._git.execute(
                ["git", "-C", str(src), f"--git-dir={self.path}", f"--work-tree={src}", "add", "-A", "."],
                env=env,
            )
            tree = self._run("write-tree", env=env)
        date = f"@{int(timestamp)} +0000"
        commit_env = {**_IDENTITY, "GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date}
        parents = ["-p", parent] if parent else []
        return self._run("commit-tree", tree, *parents, "-m", message, env=commit_env)

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
        """Write the files of `commit` into `dest` (created if missing)."""
        dest = Path(dest).resolve()
        dest.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(prefix="evolve-index-") as tmp:
            env = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
            self._run("read-tree", commit, env=env)
            self._git.execute(
                ["git", "-C", str(dest), f"--git-dir={self.path}", f"--work-tree={dest}",
                 "checkout-index", "-a", "-f"],
                env=env,
            )
        return dest

    def diff(self, old: str | None, new: str) -> str:
        """Unified diff (git apply-able, binary included) from `old` (None: empty tree) to `new`."""
        return self._run(
            "diff", "--no-color", "--no-ext-diff", "--binary", old or EMPTY_TREE, new, strip=False
        )

    def changed_files(self, old: str | None, new: str) -> list[str]:
        """Paths added, changed or removed from `old` (None: empty tree) to `new`."""
        return self._run("diff", "--no-renames", "--name-only", "-z", old or EMPTY_TREE, new).strip("\0").split("\0")

    def read_file(self, commit: str, path: str) -> bytes | None:
        """A file's bytes at `commit`; None where the commit has no such file."""
        if path not in self._run("ls-tree", "-r", "-z", "--name-only", commit, "--", path).split("\0"):
            return None
        return self._git.execute(["git", f"--git-dir={self.path}", "cat-file", "blob", f"{commit}:{path}"],
                                 stdout_as_string=False)

    def bundle(self, dest: Path, node_ids: list[str]) -> None:
        self._run("bundle", "create", str(Path(dest).resolve()), *[_ref(n) for n in node_ids])

    def fetch_bundle(self, bundle: Path) -> None:
        self._run("bundle", "verify", str(Path(bundle).resolve()))
        self._run("fetch", "--no-tags", str(Path(bundle).resolve()), "refs/nodes/*:refs/nodes/*")
