"""A failure a shell pipeline hid: a command piped into another (`pytest | tail -n 40`) exits with the last
command's status, so a check that failed reads as passing, unless the shell sets `pipefail`.

From what ran (evolve.engine.coverage_probe records each command the agent ran, its exit status and its
output's start): a command that holds a pipe, exited 0 and printed a failure report (a Python traceback, or
a test runner's summary of failures) is `masked`. Where the failing replays ran one, `pipe_locations` ranks
the agent's string literals that wrote the pipe into it (a literal holding a `|` whose text is in the
command): there an edit can drop the pipe or keep the status (the `string` and `operator` templates do both).
Pure: commands, outputs and syntax trees in, `Location`s out.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Mapping, Sequence

from evolve.meta.locations import Location

PIPE = re.compile(r"(?<!\|)\|(?!\|)")
"""A shell pipe in a command that ran: one `|`, not the `||` of an or-list."""
WRITTEN_PIPE = re.compile(r"(?<![|\s])\s+\|&?\s*[\w./-]")
"""A shell pipe as code writes one into a command: ` | ` then a command's name (`a|b` is more often a regular
expression's alternation)."""
FAILED = re.compile(
    r"^(?:FAILED\b|FAIL:|ERROR:|Failed example:)|\*{3}Test Failed\*{3}|\b[1-9]\d* (?:failed|errors?)\b",
    re.MULTILINE,
)
"""A test runner's report of a failure: pytest's `FAILED`/`N failed`, unittest's `FAIL:`/`ERROR:`, doctest's
`Failed example:`/`***Test Failed***`."""
TRACEBACK = "Traceback (most recent call last)"
MIN_LITERAL = 3
"""A literal's stripped text shorter than this (`|`, `| `) says nothing of where a command came from."""
SCORE = 1.0


def masked(command: str, exit: int | None, output: str) -> bool:
    """Whether a command that exited `exit` with `output` is a pipeline whose success hid a failure."""
    return (
        exit == 0
        and PIPE.search(command) is not None
        and (TRACEBACK in output or FAILED.search(output) is not None)
    )


def pipe_locations(trees: Mapping[str, ast.Module], commands: Sequence[tuple[str, str]]) -> list[Location]:
    """The string literals of the agent's files (`trees`, by path) that hold a pipe found in one of the
    masked `commands` ((command, the last line of its output) pairs, of failing runs), each with that
    evidence; [] without such a command."""
    if not commands:
        return []
    found = []
    for path, tree in trees.items():
        for node in ast.walk(tree):
            if not (
                isinstance(node, ast.Constant) and isinstance(node.value, str) and PIPE.search(node.value)
            ):
                continue
            text = " ".join(node.value.split())
            hits = [
                (command, last) for command, last in commands if len(text) >= MIN_LITERAL and text in command
            ]
            if hits:
                found.append(Location(path, node.lineno, SCORE, _evidence(hits, len(commands))))
    return found


def _evidence(hits: list[tuple[str, str]], commands: int) -> str:
    command, last = (json.dumps(text, ensure_ascii=False) for text in hits[0])
    return (
        f"{len(hits)} of the {commands} pipelines that exited 0 in failing replays while their output "
        f"reported a failure hold this text (e.g. {command}, ending {last}): a pipeline's exit status is "
        "its last command's, so the failure read as a pass"
    )
