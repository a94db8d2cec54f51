"""A git repository laid out in a sandbox for the agent's own tools (a baseline commit of what was copied in).

The engine never reads it back: every change it judges is computed on the host from a copied-out tree
(evolve.tasks.tree_diff), since the agent owns that `.git`.
"""

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
