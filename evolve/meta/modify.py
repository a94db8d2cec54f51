"""Self-modification: a node's agent edits a copy of its own code inside a sandbox.

The running agent and the code it edits are separate copies (/work/agent runs, /work/self is
edited), so an edit cannot break the process making it. The child is /work/self afterwards, as the
engine copies it out: its tree by the one rule of evolve.archive.codetree, written afresh on the host, is
what the gate checks and the archive commits, and its change is computed on the host against the
parent's tree. /work/self is a git repository the agent's tools may use; the engine never reads it.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from evolve.archive.codetree import tree_entries, tree_id, write_entries
from evolve.sandbox import repo
from evolve.sandbox.types import Sandbox
from evolve.tasks.tree_diff import diff_entries

RUNNING, EDITED = "/work/agent", "/work/self"
NO_CHANGE = "empty diff: the agent changed nothing"
"""Why a child whose tree is its parent's is refused (the host's diff of the two trees is empty)."""
INSTRUCTIONS, TRANSCRIPT = "/work/instructions.md", "/work/transcript.jsonl"
INSTRUCTIONS_JSON = "instructions.json"
"""The instructions as data (problem, cause, change, target, files, lines, ranked locations), beside the text:
`/work/instructions.json` in the improve step's sandbox, and in the job's log. The agent may ignore it."""


@dataclass(frozen=True)
class Modification:
    """The edited code (on the host), its diff against the parent, and how the agent ended."""

    code_dir: Path
    diff: str
    """The host's diff of the child's tree against its parent's (empty: no change)."""
    tree: str
    """The git tree id of `code_dir`: what the gate checks and the archive must commit."""
    returncode: int
    timed_out: bool
    summary: str


def self_modify(
    sandbox: Sandbox,
    parent_code: Path,
    instructions: str,
    dest: Path,
    log_dir: Path,
    *,
    channel_env: Mapping[str, str],
    budget_steps: int,
    timeout_s: float,
    data: str = "",
) -> Modification:
    """Run `python -m agent improve` on a copy of `parent_code`; copy the result to `dest`. `data`: the
    instructions as JSON, written beside their text (INSTRUCTIONS_JSON) where there are any."""
    sandbox.put_dir(parent_code, RUNNING)
    sandbox.put_dir(parent_code, EDITED)
    sandbox.write_file(INSTRUCTIONS, instructions)
    if data:
        sandbox.write_file(str(PurePosixPath(INSTRUCTIONS).with_name(INSTRUCTIONS_JSON)), data)
    repo.snapshot(sandbox, EDITED)
    env = {**channel_env, "EVOLVE_TRANSCRIPT": TRANSCRIPT, "PYTHONDONTWRITEBYTECODE": "1"}
    ran = sandbox.exec(
        [
            "python3",
            "-m",
            "agent",
            "improve",
            "--workdir",
            EDITED,
            "--instructions",
            INSTRUCTIONS,
            "--budget-steps",
            str(budget_steps),
        ],
        cwd=RUNNING,
        env=env,
        timeout=timeout_s,
    )
    (log_dir / "improve.log").write_text(
        f"exit {ran.returncode}, {ran.duration:.1f} s, timed out {ran.timed_out}\n"
        f"--- stdout\n{ran.stdout}\n--- stderr\n{ran.stderr}"
    )
    try:
        (log_dir / "improve-transcript.jsonl").write_bytes(sandbox.read_file(TRANSCRIPT))
    except (FileNotFoundError, IsADirectoryError):
        (log_dir / "improve-transcript.jsonl").write_text("")  # the agent wrote none; improve.log says why
    with tempfile.TemporaryDirectory(prefix="evolve-child-") as tmp:
        sandbox.get_dir(EDITED, Path(tmp) / "copied")
        entries = tree_entries(Path(tmp) / "copied")
    shutil.rmtree(dest, ignore_errors=True)
    write_entries(entries, dest)
    diff = diff_entries(tree_entries(parent_code), entries)
    (log_dir / "child.patch").write_text(diff)
    summary = (ran.stdout.strip().splitlines() or [ran.stderr.strip()[-200:]])[-1]
    return Modification(dest, diff, tree_id(entries), ran.returncode, ran.timed_out, summary)


def commit_problem(code_dir: Path, gate_tree: str | None, parent_tree: str) -> str | None:
    """Why a child the gate passed may not be recorded valid (None: it may): the code about to be committed
    is not the tree the gate checked (`gate_tree`, carried from wherever the gate ran), or it is its
    parent's recorded tree (`parent_tree`) again. The archive commits `code_dir` by the same rule."""
    tree = tree_id(tree_entries(code_dir))
    if tree != gate_tree:
        return (
            f"the child's code ({tree[:12]}) is not the tree the gate checked ({(gate_tree or 'none')[:12]})"
        )
    if tree == parent_tree:
        return NO_CHANGE
    return None
