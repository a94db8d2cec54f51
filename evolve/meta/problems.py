"""Choose what to improve from a node's failed evaluations (DGM's diagnosis input).

Only what the agent itself saw is used: the task statement, its transcript and its own output.
The grader's log (which holds hidden-test output) is never read here.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from evolve.archive.records import Evaluation
from evolve.untrusted import read_jsonl, read_text

# Systematic problems: when one of these explains most failures, it is the thing to fix.
SYSTEMATIC = {
    "empty_diff": "In most failed tasks the agent changed no file at all (an empty diff).",
    "timeout": "In most failed tasks the agent ran out of time before finishing.",
    "context": "In most failed tasks the conversation overflowed the model's context window.",
}
# With no failure to study (HGM may expand a node after one passing evaluation) the problem is generic.
# It names a change to the agent and not to tests: a small diagnosis model reads "check its work by
# running the tests" as "add more test cases", and a child that then edits only the smoke task's test is
# refused by the gate.
GENERAL = (
    "The agent solved every task it was given so far, so no failure shows what to fix. Make it more "
    "reliable on harder tasks with one change to the agent itself, not to any task or its tests: for "
    "example, have it write the complete solution into the task's source file in one step."
)
_CONTEXT_MARKERS = ("context length", "context window", "maximum context", "too many tokens", "n_ctx")


@dataclass(frozen=True)
class Failure:
    """One failed evaluation and what the agent saw during it."""

    task: str
    outcome: str
    empty_diff: bool
    transcript_tail: str
    agent_output: str
    unread: str = ""
    """The transcript's lines that were skipped and why (evolve.untrusted), "" when it was read whole."""

    @property
    def signature(self) -> str:
        """empty_diff | timeout | context | wrong (a diff was made, the tests failed) | error."""
        text = (self.transcript_tail + self.agent_output).lower()
        if any(marker in text for marker in _CONTEXT_MARKERS):
            return "context"
        if self.outcome == "timeout":
            return "timeout"
        if self.empty_diff:
            return "empty_diff"
        return "error" if self.outcome == "error" else "wrong"


@dataclass(frozen=True)
class Problem:
    """What the diagnosis is about: one failed task, or a systematic problem across tasks."""

    kind: str
    summary: str
    task: str | None = None
    statement: str | None = None
    transcript_tail: str = ""
    agent_output: str = ""


def _tail(text: str, limit: int) -> str:
    return text if len(text) <= limit else "[...]\n" + text[-limit:]


def read_failure(evaluation: Evaluation, limit: int = 2500) -> Failure:
    """What the agent saw in one evaluation, from its log directory (transcript, own output, diff)."""
    log_dir = Path(evaluation.log_path) if evaluation.log_path else None

    def read(name: str) -> str:  # agent-written: its end, bounded, never an exception
        return read_text(log_dir / name if log_dir is not None else None, tail=True)

    transcript = read_jsonl(log_dir / "transcript.jsonl" if log_dir is not None else None)
    lines = []
    for record in transcript:
        if record.text("role") in ("assistant", "user", "tool"):
            lines.append(f"[{record.text('role')}] {record.text('content')}".strip())
    return Failure(
        task=evaluation.task,
        outcome=evaluation.outcome,
        empty_diff=not read("diff.patch").strip(),
        transcript_tail=_tail("\n".join(lines), limit),
        agent_output=_tail(read("agent.log"), limit // 2),
        unread=transcript.note(),
    )


def record_unread(failures: Sequence[Failure], log_dir: Path) -> None:
    """`unread.md` in the job's log: per failed task, the transcript lines the engine skipped and why; no
    file when every transcript was read whole."""
    note = "".join(f"- {f.task}: {f.unread}\n" for f in failures if f.unread)
    if note:
        (log_dir / "unread.md").write_text(note)


def choose_problem(
    failures: Sequence[Failure],
    statements: Mapping[str, str],
    rng: np.random.Generator,
    *,
    min_failures: int = 3,
    dominance: float = 0.6,
) -> Problem:
    """A systematic problem when one explains ≥ `dominance` of ≥ `min_failures` failures, else a
    random failed task; with no failures, a general robustness problem."""
    if not failures:
        return Problem("general", GENERAL)
    signatures = Counter(f.signature for f in failures)
    signature, count = signatures.most_common(1)[0]
    if signature in SYSTEMATIC and len(failures) >= min_failures and count / len(failures) >= dominance:
        # The example is drawn, not the first: repeated expansions of one node get different prompts.
        examples = [f for f in failures if f.signature == signature]
        example = examples[int(rng.integers(len(examples)))]
        return Problem(
            signature,
            f"{SYSTEMATIC[signature]} ({count} of {len(failures)} failures.)",
            example.task,
            statements.get(example.task),
            example.transcript_tail,
            example.agent_output,
        )
    chosen = failures[int(rng.integers(len(failures)))]
    what = {
        "wrong": "The agent changed the code but the task's tests still fail.",
        "error": "The agent crashed.",
        "empty_diff": "The agent changed no file.",
        "timeout": "The agent ran out of time.",
        "context": "The conversation overflowed the context.",
    }
    return Problem(
        "task",
        what[chosen.signature],
        chosen.task,
        statements.get(chosen.task),
        chosen.transcript_tail,
        chosen.agent_output,
    )
