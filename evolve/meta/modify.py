"""Self-modification: a node's agent edits a copy of its own code inside a sandbox.

The running agent and the code it edits are separate copies (/work/agent runs, /work/self is
edited), so an edit cannot break the process making it. The child is /work/self afterwards.
"""

from __future__ import annotations

import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from evolve.sandbox import repo
from evolve.sandbox.types import Sandbox

RUNNING, EDITED = "/work/agent", "/work/self"
INSTRUCTIONS, TRANSCRIPT = "/work/instructions.md", "/work/transcript.jsonl"


@dataclass(frozen=True)
class Modification:
    """The edited code (on the host), its diff against the parent, and how the agent ended."""

    code_dir: Path
    diff: str
    returncode: int
    timed_out: bool
    summary: str


def self_modify(sandbox: Sandbox, parent_code: Path, instructions: str, dest: Path, log_dir: Path, *,
                channel_env: Mapping[str, str], budget_steps: int, timeout_s: float) -> Modification:
    """Run `python -m agent improve` on a copy of `parent_code`; copy the result to `dest`."""
    sandbox.put_dir(parent_code, RUNNING)
    sandbox.put_dir(parent_code, EDITED)
    sandbox.write_file(INSTRUCTIONS, instructions)
    repo.snapshot(sandbox, EDITED)
    env = {**channel_env, "EVOLVE_TRANSCRIPT": TRANSCRIPT, "PYTHONDONTWRITEBYTECODE": "1"}
    ran = sandbox.exec(
        ["python3", "-m", "agent", "improve", "--workdir", EDITED, "--instructions", INSTRUCTIONS,
         "--budget-steps", str(budget_steps)],
        cwd=RUNNING, env=env, timeout=timeout_s,
    )
    (log_dir / "improve.log").write_text(
        f"exit {ran.returncode}, {ran.duration:.1f} s, timed out {ran.timed_out}\n"
        f"--- stdout\n{ran.stdout}\n--- stderr\n{ran.stderr}"
    )
    try:
        (log_dir / "improve-transcript.jsonl").write_bytes(sandbox.read_file(TRANSCRIPT))
    except (FileNotFoundError, IsADirectoryError):
        (log_dir / "improve-transcript.jsonl").write_text("")  # the agent wrote none; improve.log says why
    diff = repo.diff(sandbox, EDITED)
    (log_dir / "child.patch").write_text(diff)
    sandbox.get_dir(EDITED, dest)
    shutil.rmtree(dest / ".git", ignore_errors=True)
    summary = (ran.stdout.strip().splitlines() or [ran.stderr.strip()[-200:]])[-1]
    return Modification(dest, diff, ran.returncode, ran.timed_out, summary)
