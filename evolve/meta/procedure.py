"""The agent-side meta procedure (`[meta] procedure = "agent"`, DGM-H): the node's own agent chooses the
problem and writes its child's instructions, as `python -m agent diagnose --material DIR --out FILE` in
a sandbox, with the `diagnose` model through the gateway.

The engine writes the failure material (only what the agent saw: statements, the ends of its
transcripts, its own output; never the grader's) and copies it in: what the agent does to its copy
changes nothing here. The instructions come back only from the file the engine named, as untrusted
text: capped, stripped of control characters, and used for nothing but the child's `improve` step
(the search reads no number from them; the child is then judged by the gate and its evaluations).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from evolve.meta.diagnose import DiagnosisFailed
from evolve.meta.problems import Failure
from evolve.sandbox.types import Sandbox

AGENT, MATERIAL, OUT = "/work/agent", "/work/material", "/work/diagnosis.md"
TRANSCRIPT = "/work/diagnose-transcript.jsonl"
CONVERSATIONS = "conversations.jsonl"
MAX_FAILURES = 12
"""Failed tasks shown; with more, a seeded draw (repeated expansions of one node see different ones)."""
MAX_FILE_CHARS = 20_000
"""Any one file of the material (the summary of a long-evaluated node, a pooled experience) is cut here."""
MAX_INSTRUCTIONS = 8_000
"""The instructions read back are cut here: the child's improve prompt must leave room for its code."""
STATEMENT_CHARS = 1_500
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
_UNSAFE = re.compile(r"[^\w.-]+")

README = """# Failure material for `python -m agent diagnose`

What this agent (the one running `diagnose`) did on the search tasks it was given, as the engine
recorded it; only what the agent itself saw (no hidden tests, no grader output).
The agent's files: {files}

- SUMMARY.md: every counted evaluation (task and outcome), and the failures by kind.
- failures/NN-TASK.md: one failed task each: its statement, the end of the agent's transcript, the
  agent's own output (at most {limit}; drawn when there are more).
- conversations.jsonl: every counted evaluation as the gateway recorded it, one JSON object a line
  (task, outcome, exit status, whether it edited, the task as sent, and per turn the model's reply,
  what the agent showed it next, whether the reply was cut at the token limit, whether its request
  held the previous reply); failed evaluations first. The agent's own code counts its failure
  patterns from it where it has code for that.
{extra}
Choose the problem most worth fixing in the agent's own code, and write to the --out file the
instructions that `python -m agent improve` will get. Only that file is read (at most {cap} characters).
Name one target of the agent's own code on a line of its own, `Target: FILE:NAME` (e.g.
`Target: agent/core.py:Runner.step`): the engine then shows `improve` that target's source and the map.
"""

KINDS = {
    "empty_diff": "changed no file",
    "timeout": "ran out of time",
    "context": "overflowed the context",
    "wrong": "changed code, tests still fail",
    "error": "crashed",
}


@dataclass(frozen=True)
class Material:
    """The files the engine gives `python -m agent diagnose` (plain data: shipped with the expansion)."""

    files: tuple[tuple[str, str], ...]

    def write(self, root: Path) -> None:
        """A copy on the host (the job's record of what the agent was shown)."""
        for name, text in self.files:
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_text(text)


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + f"\n[evolve: cut at {limit} characters]\n"


def failure_material(
    outcomes: Sequence[tuple[str, str]],
    failures: Sequence[Failure],
    statements: Mapping[str, str],
    agent_files: Sequence[str],
    rng: np.random.Generator,
    extra: Mapping[str, str] | None = None,
    *,
    conversations: str = "",
) -> Material:
    """The material from a node's counted search evaluations (`outcomes`: (task, outcome)), its failures
    and the names of its files.

    `extra`: more files by relative name, e.g. a pooled experience (GEA) as `experience.md`, listed in
    README.md; each is cut to MAX_FILE_CHARS. `conversations`: conversations.jsonl, already sized by its
    maker (evolve.meta.evidence.conversations_jsonl keeps whole lines)."""
    if bad := [name for name in extra or {} if name.startswith("/") or ".." in Path(name).parts]:
        raise ValueError(f"material file names must be relative and inside the material: {bad}")
    shown = list(failures)
    if len(shown) > MAX_FAILURES:
        picked = sorted(rng.choice(len(shown), MAX_FAILURES, replace=False))
        shown = [shown[int(i)] for i in picked]
    kinds = Counter(f.signature for f in failures)
    summary = [
        "# Evaluations",
        "",
        *(f"- {task}: {outcome}" for task, outcome in outcomes),
        "",
        f"# Failures by kind ({len(failures)} of {len(outcomes)})",
        "",
        *(f"- {kind} ({KINDS[kind]}): {count}" for kind, count in kinds.most_common()),
    ]
    files = {"SUMMARY.md": "\n".join(summary) + "\n"}
    for number, failure in enumerate(shown, 1):
        files[f"failures/{number:02d}-{_UNSAFE.sub('_', failure.task)[:80]}.md"] = _failure_text(
            failure, statements
        )
    listed = "".join(
        f"- {name}: given by the engine for this run's procedure.\n" for name in sorted(extra or {})
    )
    readme = README.format(
        files=", ".join(agent_files), limit=MAX_FAILURES, extra=listed, cap=MAX_INSTRUCTIONS
    )
    every = {"README.md": readme, **files, **(extra or {})}
    cut = tuple((name, _cut(text, MAX_FILE_CHARS)) for name, text in every.items())
    return Material((*cut, (CONVERSATIONS, conversations)))


def _failure_text(failure: Failure, statements: Mapping[str, str]) -> str:
    parts = [
        f"# {failure.task}: {failure.outcome} ({KINDS[failure.signature]})",
        f"## The task statement\n{_cut(statements.get(failure.task, '(unknown)').strip(), STATEMENT_CHARS)}",
    ]
    if failure.transcript_tail:
        parts.append(f"## The end of what the agent saw and did\n{failure.transcript_tail}")
    if failure.agent_output:
        parts.append(f"## The agent's own output\n{failure.agent_output}")
    if failure.unread:
        parts.append(f"## Transcript lines the engine skipped\n{failure.unread}")
    return "\n\n".join(parts) + "\n"


def clean_instructions(raw: bytes) -> str:
    """The instructions as the child gets them: decoded, control characters dropped, cut to the cap.

    DiagnosisFailed when nothing is left (a meta procedure that writes nothing is broken)."""
    text = _cut(_CONTROL.sub("", raw.decode("utf-8", "replace")).strip(), MAX_INSTRUCTIONS)
    if not text:
        raise DiagnosisFailed("diagnose wrote empty instructions")
    return text


def output_tail(text: str, limit: int = 600) -> str:
    """The end of a command's output (where an error shows), for a one-line reason."""
    text = text.strip()
    return text if len(text) <= limit else "..." + text[-limit:]


def agent_diagnose(
    sandbox: Sandbox,
    material: Material,
    log_dir: Path,
    *,
    channel_env: Mapping[str, str],
    timeout_s: float,
    log_name: str = "diagnose",
) -> str:
    """Run `python -m agent diagnose` of the agent at AGENT (the caller put it there) on `material`: the
    instructions it wrote to --out, or DiagnosisFailed saying why there are none. The validation gate
    runs it on its own small material, in the sandbox where the child already ran: hence the rm."""
    sandbox.exec(["rm", "-rf", OUT, MATERIAL, TRANSCRIPT], timeout=60)
    for name, text in material.files:
        sandbox.write_file(f"{MATERIAL}/{name}", text)
    env = {**channel_env, "EVOLVE_TRANSCRIPT": TRANSCRIPT, "PYTHONDONTWRITEBYTECODE": "1"}
    ran = sandbox.exec(
        ["python3", "-m", "agent", "diagnose", "--material", MATERIAL, "--out", OUT],
        cwd=AGENT,
        env=env,
        timeout=timeout_s,
    )
    (log_dir / f"{log_name}.log").write_text(
        f"exit {ran.returncode}, {ran.duration:.1f} s, timed out {ran.timed_out}\n"
        f"--- stdout\n{ran.stdout}\n--- stderr\n{ran.stderr}"
    )
    _save_transcript(sandbox, log_dir / f"{log_name}-transcript.jsonl")
    if not ran.ok:
        why = (
            "timed out" if ran.timed_out else f"exit {ran.returncode}: {output_tail(ran.stdout + ran.stderr)}"
        )
        raise DiagnosisFailed(f"diagnose did not complete ({why})")
    try:
        raw = sandbox.read_file(OUT)
    except (FileNotFoundError, IsADirectoryError):
        raise DiagnosisFailed("diagnose wrote no instructions to its --out file") from None
    return clean_instructions(raw)


def _save_transcript(sandbox: Sandbox, dest: Path) -> None:
    """The step's transcript: the agent's own record, kept for reading, never for deciding."""
    try:
        dest.write_bytes(sandbox.read_file(TRANSCRIPT))
    except (FileNotFoundError, IsADirectoryError):
        dest.write_text("")  # the agent wrote none; the step's log says why
