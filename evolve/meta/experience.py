"""GEA's pooled experience: what a parent group has tried and how it fared, bounded, as a typed value.

Group-Evolving Agents (arXiv 2602.04837) make each offspring from the whole parent group's
evolutionary traces. Here a pool holds, per parent: the changes along its lineage (each step's patch
and the diagnosed problem that asked for it, newest first), its per-task outcome vector (the
archive's graded outcomes, never what an agent printed), and short tails of its failed tasks' logs.
Every part has a bound (`Bounds`) and so has the whole rendering, so an agent that writes megabytes
of log or patch cannot crowd out the rest or blow up a sibling's prompt.

`ExperiencePool.render()` is the text either meta procedure consumes: the engine appends it to each
offspring's improve instructions (evolve.engine.worker), and an agent-side `diagnose` can read the
same text (or `to_json()`) as its input. Patches and log tails are agent-written text: they inform
the next improve step and decide nothing (no score, verdict or budget reads the pool).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from evolve.archive.records import Evaluation, Job
from evolve.archive.vocab import JobKind, Split, counts_as

POOL_INTRO = (
    "What the agents of this group changed, how they fared and where they failed. Reuse what worked "
    "in any of them; do not repeat what did not."
)


@dataclass(frozen=True)
class Bounds:
    """Size limits of a pool (characters unless said otherwise)."""

    lineage_steps: int = 4
    """Newest steps of each parent's lineage shown."""
    patch_chars: int = 1500
    problem_chars: int = 300
    tasks: int = 24
    """Tasks in each outcome vector (the first in task-id order)."""
    excerpts: int = 2
    """Failed tasks per parent whose log tail is shown."""
    excerpt_chars: int = 400
    total_chars: int = 16_000
    """The whole rendering's cap."""


def clip(text: str, limit: int) -> str:
    """The head of `text`, at most `limit` characters plus a marker saying how much was cut."""
    return text if len(text) <= limit else f"{text[:limit]}\n[... {len(text) - limit} more characters cut]"


def tail(text: str, limit: int) -> str:
    """The end of `text` (where a failure shows), at most `limit` characters plus a marker."""
    return text if len(text) <= limit else f"[... {len(text) - limit} characters cut]\n{text[-limit:]}"


@dataclass(frozen=True)
class LineageStep:
    """One self-modification that made an ancestor (or the parent itself)."""

    node: str
    problem: str
    """The diagnosed problem that asked for the change (the head of the expansion's instructions)."""
    patch: str


@dataclass(frozen=True)
class LogExcerpt:
    """The tail of what the agent saw and did in one failed task."""

    task: str
    outcome: str
    text: str


@dataclass(frozen=True)
class AgentExperience:
    """One parent's trace."""

    node: str
    lineage: tuple[LineageStep, ...]
    """Newest first."""
    outcomes: tuple[tuple[str, str], ...]
    """`(task, outcome)` per task, in task-id order: the archive's first counted result."""
    excerpts: tuple[LogExcerpt, ...]
    hidden_tasks: int = 0
    """Tasks with a result that the bound on `outcomes` left out."""


@dataclass(frozen=True)
class ExperiencePool:
    """A parent group's pooled experience."""

    agents: tuple[AgentExperience, ...]
    bounds: Bounds = field(default_factory=Bounds)

    def to_json(self) -> dict:
        return asdict(self)

    def render(self) -> str:
        """The pool as the improve step reads it; at most `bounds.total_chars` (plus a marker)."""
        names = ", ".join(agent.node for agent in self.agents)
        parts = [f"# Pooled experience of the parent group ({names})", POOL_INTRO]
        parts += [_render_agent(agent) for agent in self.agents]
        return clip("\n\n".join(parts), self.bounds.total_chars) + "\n"


def fenced(text: str, info: str = "") -> str:
    """`text` in a code fence longer than any run of backticks in it, so agent-written text cannot close
    the fence and pass itself off as the engine's lines (outcomes, headings) around it."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{info}\n{text.rstrip()}\n{fence}"


def _render_agent(agent: AgentExperience) -> str:
    lines = [f"## Agent {agent.node}"]
    passed = sum(outcome == "pass" for _, outcome in agent.outcomes)
    shown = " ".join(f"{task}={outcome}" for task, outcome in agent.outcomes) or "(no results yet)"
    more = f" (+{agent.hidden_tasks} more tasks)" if agent.hidden_tasks else ""
    lines.append(f"Outcomes ({passed}/{len(agent.outcomes)} passed): {shown}{more}")
    if agent.lineage:
        lines.append("Changes along its lineage, newest first:")
        for step in agent.lineage:
            lines.append(f"- {step.node}, made for: {step.problem or '(no recorded problem)'}")
            lines.append(fenced(step.patch or "(empty patch)", "diff"))
    else:
        lines.append("Changes along its lineage: none (it is a root).")
    for excerpt in agent.excerpts:
        lines.append(f"Where it failed, task {excerpt.task} ({excerpt.outcome}):\n{fenced(excerpt.text)}")
    return "\n".join(lines)


def agent_experience(
    node: str,
    lineage: Sequence[tuple[str, str | None, str]],
    outcomes: Mapping[str, str],
    failures: Sequence[tuple[str, str, str]],
    bounds: Bounds = Bounds(),
) -> AgentExperience:
    """One parent's bounded trace from raw material: `lineage` as `(node, instructions, patch)` oldest
    first, `outcomes` task → outcome, `failures` as `(task, outcome, log text)` in the order to show."""
    # a problem is shown on one line: its text cannot start a line of its own (a fake outcome line)
    steps = tuple(
        LineageStep(
            step,
            clip(" ".join((problem or "").split()), bounds.problem_chars),
            clip(patch, bounds.patch_chars),
        )
        for step, problem, patch in reversed(lineage[-bounds.lineage_steps :])
    )
    tasks = sorted(outcomes)
    return AgentExperience(
        node,
        steps,
        tuple((task, outcomes[task]) for task in tasks[: bounds.tasks]),
        tuple(
            LogExcerpt(task, outcome, tail(text, bounds.excerpt_chars))
            for task, outcome, text in failures[: bounds.excerpts]
        ),
        hidden_tasks=max(len(tasks) - bounds.tasks, 0),
    )


def counted_outcomes(
    evaluations: Sequence[Evaluation], tasks: frozenset[str] | None
) -> dict[str, Evaluation]:
    """Task → the evaluation the search counted (the first with a counting outcome, search tasks only)."""
    counted: dict[str, Evaluation] = {}
    for evaluation in evaluations:
        if counts_as(evaluation.outcome) is None or (tasks is not None and evaluation.task not in tasks):
            continue
        counted.setdefault(evaluation.task, evaluation)
    return counted


def group_of(jobs: Sequence[Job], job: Job) -> tuple[str, ...]:
    """The parent group of an expansion job: the nodes of the expansion jobs of its search decision
    (a group iteration's jobs share one; a re-run after a resume keeps it), in dispatch order."""
    if job.decision is None:
        return (job.node,)
    return tuple(
        dict.fromkeys(j.node for j in jobs if j.kind == JobKind.EXPAND and j.decision == job.decision)
    )


def pool_from_run(run, parents: Sequence[str], bounds: Bounds = Bounds()) -> ExperiencePool:
    """The pooled experience of `parents` (node ids of `run`, an `evolve.archive.store.Run`)."""
    from evolve.archive.tree import recorded_tasks
    from evolve.meta.problems import read_failure

    tasks = recorded_tasks(run)
    agents = []
    for parent in parents:
        lineage: list[tuple[str, str | None, str]] = []
        current = run.node(parent)
        while current.parent is not None and len(lineage) < bounds.lineage_steps:
            lineage.insert(0, (current.id, current.instructions, run.diff(current.id)))
            current = run.node(current.parent)
        counted = counted_outcomes(run.evaluations(parent, split=Split.DEV), tasks)
        failed = [counted[task] for task in sorted(counted) if counted[task].outcome != "pass"]
        failures = []
        for evaluation in failed[: bounds.excerpts]:
            seen = read_failure(evaluation, limit=bounds.excerpt_chars)
            failures.append(
                (
                    evaluation.task,
                    str(evaluation.outcome),
                    "\n".join(part for part in (seen.transcript_tail, seen.agent_output) if part),
                )
            )
        agents.append(
            agent_experience(
                parent, lineage, {t: str(e.outcome) for t, e in counted.items()}, failures, bounds
            )
        )
    return ExperiencePool(tuple(agents), bounds)


def recorded_experience(run, job: Job, bounds: Bounds = Bounds()) -> str:
    """The rendered pool of `job`'s parent group, also recorded in the job's log (`experience.md`,
    `experience.json`) for people and for an agent-side meta procedure."""
    pool = pool_from_run(run, group_of(run.jobs(), job), bounds)
    log_dir = Path(run.log_dir(job.id))
    text = pool.render()
    (log_dir / "experience.md").write_text(text)
    (log_dir / "experience.json").write_text(json.dumps(pool.to_json(), indent=1))
    return text


def with_experience(instructions: str, pool: str) -> str:
    """An offspring's improve instructions with its parent group's rendered pool appended."""
    return f"{instructions.rstrip()}\n\n{pool}"
