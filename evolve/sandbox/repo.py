"""Git helpers on any `Sandbox`: a baseline commit of a copied-in repository and the diff against it."""

from __future__ import annotations

from evolve.sandbox.types import Sandbox, SandboxError

_GIT = ["git", "-c", "user.name=evolve", "-c", "user.email=evolve@localhost", "-c", "core.autocrlf=false"]


class GitFailed(SandboxError):
    """A git command the engine itself runs in a sandbox failed."""


def _git(sandbox: Sandbox, path: str, *args: str, timeout: float = 120.0) -> str:
    result = sandbox.exec([*_GIT, "-C", path, *args], timeout=timeout)
    if not result.ok:
        raise GitFailed(
            f"git {' '.join(args)} in {path} failed ({result.returncode}): {result.stderr.strip()}"
        )
    return result.stdout


def snapshot(sandbox: Sandbox, path: str) -> None:
    """Make the current contents of `path` the baseline (`git init` if needed, commit everything)."""
    _git(sandbox, path, "init", "-q")
    _git(sandbox, path, "add", "-A")
    _git(sandbox, path, "commit", "-q", "--allow-empty", "--no-verify", "-m", "evolve baseline")
    _git(sandbox, path, "tag", "-f", "evolve-baseline")


def diff(sandbox: Sandbox, path: str) -> str:
    """The binary-safe unified diff of `path` against its baseline, new files included.

    The diff goes through a file inside `.git`, so no output cap truncates it.
    """
    _git(sandbox, path, "add", "-A")
    _git(sandbox, path, "diff", "--cached", "--binary", "--output=.git/evolve.diff", "evolve-baseline")
    try:
        data = sandbox.read_file(f"{path.rstrip('/')}/.git/evolve.diff")
    except (FileNotFoundError, IsADirectoryError) as exc:  # the agent's processes own that .git
        raise GitFailed(f"the diff of {path} could not be read: {exc!r}") from exc
    return data.decode("utf-8", errors="surrogateescape")
