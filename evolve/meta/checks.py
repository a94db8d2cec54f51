"""Where the agent chose a check that passed while its task failed: a location source from its own checks.

An agent that checks its work (runs the tests, a compile, the examples) and stops when the check passes is
as good as its check: a check that passes on code the grader then fails did not test what the task asks.
The check's command is text the agent's code wrote (a constant, an f-string, a template), so the lines whose
literal text the command holds are where the check was chosen. Each such line ranks at the share of failed
evaluations whose last own check passed with a command holding its text (the `weak_check` pattern of
evolve.meta.evidence, which reads the check by the agent's own markers).

The command is what the agent printed: it chooses where to look, never credit. Nothing here knows an agent:
the texts are its code's, the check's form its profile's markers. Pure: code and records in, locations out.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from evolve import syntax
from evolve.meta.agentmap import agent_files
from evolve.meta.evidence import TaskRun, weak_check
from evolve.meta.locations import Location
from evolve.meta.provenance import flat, texts_of
from evolve.untrusted import read_text

__all__ = ["weak_checks"]


def weak_checks(code: Path, runs: Sequence[TaskRun]) -> list[Location]:
    """The lines of the agent's code (`code`, its root) whose literal text the passing own checks of failed
    evaluations ran, scored by the share of failed evaluations that checked so; [] where none did."""
    failed = [run for run in runs if run.outcome != "pass"]
    commands = Counter(flat(command) for run in failed if (command := weak_check(run)) is not None)
    if not commands:
        return []
    found = []
    for path in agent_files(code):
        tree = syntax.parsed(read_text(code / path))
        if tree is None:
            continue
        for text in texts_of(path, tree):
            piece = max(text.pieces, key=len)
            held = {command: n for command, n in commands.items() if piece in command}
            if not held:
                continue
            count = sum(held.values())
            command = max(held, key=lambda c: held[c])
            quoted = json.dumps(command if len(command) <= 60 else command[:57] + "...")
            found.append(
                Location(
                    path,
                    text.line,
                    round(count / len(failed), 4),
                    f"{count} of {len(failed)} failed evaluations ended with the agent's own check {quoted} "
                    "passing: it writes that check's text (the check did not test what the task asks)",
                )
            )
    return sorted(found, key=lambda loc: (-loc.score, loc.path, loc.line))
