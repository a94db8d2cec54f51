"""The meta step as the Darwin Gödel Machine's code does it (`[meta] style = "dgm"`).

DGM (github.com/jennyzzt/dgm: DGM_outer.choose_selfimproves, self_improve_step.diagnose_problem,
prompts/self_improvement_prompt.py) picks what to diagnose for a parent by these branches, in order:
empty patches in >= 10% of its tasks (then with probability 1/4), stochasticity (1/4), a context
overflow seen in its logs (1/4), else one unresolved task at random. The diagnoser sees the agent's
whole code, its lineage's patches, and for a task the agent's log, the task statement and the
predicted patch (DGM also showed the private tests and their results; here only behind
`show_test_results`, see `MetaConfig`). It answers one JSON object with log_summarization,
potential_improvements, improvement_proposal, implementation_suggestion and problem_description;
the child's prompt is the agent summary (the contract, plus the agent's own description of its parts from its
profile.toml, evolve.meta.profile) and "# To Implement", the suggestion and the description.
A reply without that JSON is asked again (DGM: 3 more times); then the expansion fails: there is no
lesson fallback. The prompt wording here is evolve's own; inputs, branches and schema are DGM's.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from evolve.meta.diagnose import DiagnosisFailed, reply_object
from evolve.meta.problems import Failure
from evolve.meta.profile import agent_profile
from evolve.untrusted import read_jsonl, read_text

log = logging.getLogger(__name__)

EMPTY_SHARE, BRANCH_P = 0.10, 0.25
"""DGM's thresholds: empty patches in >= 10% of tasks; each special branch taken with p = 0.25."""
SPECIAL = ("solve_empty_patches", "solve_stochasticity", "solve_contextlength")
FIELDS = (
    "log_summarization",
    "potential_improvements",
    "improvement_proposal",
    "implementation_suggestion",
    "problem_description",
)
REQUIRED = FIELDS[1:]  # the special branches have no task log to summarise
LOG_LIMIT = 250_000  # DGM clips the agent's log at this many characters

AGENT_SUMMARY = """# Coding agent summary

- The agent is the Python package `agent/`, run as `python -m agent solve` (on a task) and
  `python -m agent improve` (on its own code); `agent/__main__.py` is the entry point.
{parts}- `tests/` holds the agent's own tests; they must keep passing.
- Keep tools general: nothing specific to one repository or task. No unbounded loops. Do not install
  packages at run time; list new dependencies in `requirements.txt`.

"""
"""The contract every agent meets; `{parts}`: the agent's own description of its parts (its profile.toml)."""

_SYSTEM = """{summary}# The agent's code (with the patches that made it)
{code}

Find ONE detailed, general plan that would improve the agent's ability to solve coding tasks; not a
fix specific to one task or repository.
"""

_ANSWER = """Answer with exactly one JSON object in a ```json fenced block, with these string fields:
{fields}
It is parsed automatically."""

_FIELD_TEXT = {
    "log_summarization": "how the agent tried to solve the task: tools used, approach, what went wrong",
    "potential_improvements": "general improvements to the agent that would help (not task-specific fixes)",
    "improvement_proposal": "ONE high-impact improvement among them, described in detail",
    "implementation_suggestion": "what to add or change in the agent's code to implement it (prefer "
    "changing existing tools to adding new ones)",
    "problem_description": "the proposal written as an issue a software engineer could implement from",
}

_BRANCH_TEXT = {
    "solve_empty_patches": "In some tasks the agent produced an empty patch, or one that only touched tests. "
    "The agent is stochastic, so a run may end without an edit. Make it handle that "
    "(for example, by trying again when it made no change to the source).",
    "solve_stochasticity": "The agent is stochastic: its first patch for a task is not always right. Make it "
    "use that (for example, several attempts and a choice among them by its own tests, "
    "or earlier attempts given as context).",
    "solve_contextlength": "The agent's conversations overflow the model's context window and the request "
    "is refused as too long. Make the agent handle the refusal when it happens (for "
    "example, by shortening what it keeps), and leave it as is otherwise.",
}


@dataclass(frozen=True)
class Entry:
    """What one expansion diagnoses: a special branch, or a task the parent did not resolve."""

    branch: str
    """One of SPECIAL, or "task"."""
    task: str | None = None


@dataclass(frozen=True)
class Diagnosis:
    """DGM's diagnosis schema (log_summarization is empty for the special branches)."""

    log_summarization: str
    potential_improvements: str
    improvement_proposal: str
    implementation_suggestion: str
    problem_description: str

    def child_prompt(self, summary: str = AGENT_SUMMARY.format(parts="")) -> str:
        """The coding agent's instructions, built as DGM builds them."""
        return f"{summary}# To Implement\n\n{self.implementation_suggestion}\n\n{self.problem_description}"

    def as_dict(self) -> dict[str, str]:
        return asdict(self)


def choose_entry(failures: Sequence[Failure], total_tasks: int, rng: np.random.Generator) -> Entry:
    """DGM's branch choice for one parent (SWE-bench variant), drawing from the run's seeded `rng`."""
    empty = [f.task for f in failures if f.empty_diff]
    unresolved = [f.task for f in failures if not f.empty_diff]
    if total_tasks and len(empty) >= EMPTY_SHARE * total_tasks and rng.random() < BRANCH_P:
        return Entry("solve_empty_patches")
    if rng.random() < BRANCH_P:
        return Entry("solve_stochasticity")
    if any(f.signature == "context" for f in failures) and rng.random() < BRANCH_P:
        return Entry("solve_contextlength")
    pool = unresolved or empty  # DGM draws from unresolved tasks; with none, an empty-patch task
    if not pool:
        return Entry("solve_stochasticity")  # every task solved: only robustness is left to improve
    return Entry("task", pool[int(rng.integers(len(pool)))])


def code_text(code: Path, patches: Sequence[str]) -> str:
    """The agent's whole Python code, then its lineage's patches, oldest first (DGM's layout)."""
    parts = []
    for path in sorted(code.rglob("*.py")):
        if "__pycache__" in path.parts:
            continue
        # the agent's own file: one that is no regular file (a link to a directory) reads as empty
        parts += [f"# {path.relative_to(code)}", read_text(path)]
    parts += [part for i, patch in enumerate(patches) for part in (f"# Patch {i + 1}", patch)]
    return "\n".join(parts)


@dataclass(frozen=True)
class TaskView:
    """What the diagnoser sees of one unresolved task."""

    log: str
    statement: str
    predicted_patch: str
    test_results: str | None = None
    """The grader's output: shown only with `show_test_results` (hidden tests leak into the child)."""


def agent_summary(code: Path) -> str:
    """DGM's "coding agent summary" of the agent rooted at `code`: the contract, with the agent's own
    description of its parts where its profile has one (evolve.meta.profile)."""
    profile = agent_profile(code)
    if profile.problem:  # the agent's own file: its summary is left out, the meta step goes on
        log.warning("the agent's profile is not used: %s", profile.problem)
    return AGENT_SUMMARY.format(parts=f"{profile.summary}\n" if profile.summary else "")


def messages(
    entry: Entry, code: str, view: TaskView | None, summary: str = AGENT_SUMMARY.format(parts="")
) -> list[dict]:
    """The diagnosis request for `entry`."""
    system = _SYSTEM.format(summary=summary, code=code)
    fields = FIELDS if entry.branch == "task" else REQUIRED
    answer = _ANSWER.format(fields="\n".join(f'- "{name}": {_FIELD_TEXT[name]}' for name in fields))
    if entry.branch != "task":
        return [
            {"role": "system", "content": system},
            {"role": "user", "content": f"{_BRANCH_TEXT[entry.branch]}\n\n{answer}"},
        ]
    if view is None:
        raise ValueError("a task entry needs the task's view")
    log = view.log if len(view.log) <= LOG_LIMIT else view.log[:LOG_LIMIT] + "\n<log clipped>"
    sections = [
        "Here is the log of the coding agent trying, and failing, to solve a task.",
        f"# Agent log\n{log or 'No log available.'}",
        f"# Task\n{view.statement}",
        f"# The agent's patch\n{view.predicted_patch or 'No patch: assume the agent failed.'}",
    ]
    if view.test_results is not None:
        sections.append(f"# Test results (hidden tests the agent did not see)\n{view.test_results}")
    sections.append(answer)
    return [{"role": "system", "content": system}, {"role": "user", "content": "\n\n".join(sections)}]


def parse_diagnosis(reply: str, entry: Entry) -> Diagnosis:
    """The diagnosis in a reply; ValueError if unusable."""
    data = reply_object(reply)
    required = FIELDS if entry.branch == "task" else REQUIRED
    values = {}
    for name in FIELDS:
        value = data.get(name, "")
        if isinstance(value, list | dict):  # models sometimes answer a list of improvements
            value = json.dumps(value, indent=1)
        if not isinstance(value, str) or (name in required and not value.strip()):
            raise ValueError(f'"{name}" must be a non-empty string')
        values[name] = value.strip()
    return Diagnosis(**values)


def diagnose_dgm(
    complete: Callable[..., str], request: list[dict], entry: Entry, *, retries: int = 3
) -> Diagnosis:
    """Ask; a reply without a usable JSON object is asked afresh, `retries` more times (as DGM does)."""
    errors = []
    for _ in range(retries + 1):
        try:
            return parse_diagnosis(complete(request), entry)
        except ValueError as exc:
            errors.append(str(exc))
    raise DiagnosisFailed(f"no usable DGM diagnosis after {retries + 1} replies: {'; '.join(errors)}")


def _agent_log(log_dir: Path | None) -> str:
    """The agent's whole log of one task: its transcript, then its own output."""
    if log_dir is None:
        return ""
    lines = []
    # agent-written: a torn last line of a killed agent, or any line not a bounded object, is skipped
    for record in read_jsonl(log_dir / "transcript.jsonl"):
        if record.text("role"):
            lines.append(f"[{record.text('role')}] {record.text('content')}")
    output = log_dir / "agent.log"
    if output.is_file():
        lines.append(read_text(output, tail=True))
    return "\n".join(lines)


def _read(log_dir: Path | None, name: str) -> str:
    return read_text(log_dir / name if log_dir is not None else None, tail=True)


def dgm_instructions(
    run,
    node,
    statements: dict[str, str],
    parent_code: Path,
    complete: Callable[..., str],
    *,
    rng: np.random.Generator,
    show_test_results: bool,
    log_dir: Path,
) -> str:
    """Choose, diagnose and build the child's prompt for one expansion of `node` (a `Node` of `run`);
    records `dgm-entry.json` (the branch) and `diagnosis.json` (DGM's schema) in `log_dir`."""
    from evolve.archive.records import FAILURE_OUTCOMES
    from evolve.meta.problems import read_failure, record_unread

    evaluations = [e for e in run.evaluations(node.id, split="dev") if e.outcome != "infra"]
    failed = {e.task: e for e in evaluations if e.outcome in FAILURE_OUTCOMES}
    failures = [read_failure(e) for e in failed.values()]
    record_unread(failures, log_dir)
    entry = choose_entry(failures, len({e.task for e in evaluations}), rng)
    (log_dir / "dgm-entry.json").write_text(json.dumps(asdict(entry)))
    lineage: list[str] = []
    current = node
    while current.parent is not None:  # the patches that made this agent, oldest first
        lineage.insert(0, run.diff(current.id))
        current = run.node(current.parent)
    view = None
    if entry.task is not None:
        where = failed[entry.task].log_path
        task_dir = Path(where) if where else None
        view = TaskView(
            _agent_log(task_dir),
            statements.get(entry.task, ""),
            _read(task_dir, "diff.patch"),
            _read(task_dir, "grade.log") if show_test_results else None,
        )
    summary = agent_summary(parent_code)
    diagnosis = diagnose_dgm(complete, messages(entry, code_text(parent_code, lineage), view, summary), entry)
    (log_dir / "diagnosis.json").write_text(
        json.dumps({"entry": asdict(entry), **diagnosis.as_dict()}, indent=2)
    )
    return diagnosis.child_prompt(summary)
