"""Where the agent crashed: a location source from the tracebacks its failed evaluations ended with.

An agent that raises an exception nothing catches ends its run with Python's traceback on its standard
error, each frame a file and a line. The frames in the agent's own files are where the fault usually is
(crash-stack fault localization: the frame that raised, or a caller that handed it a wrong value), and a
line that every run runs (the command's dispatch, the call that starts the task) is no more suspicious to
spectra than any other. Each agent line in the last traceback of a failed evaluation's output is ranked at
the share of failed evaluations whose traceback held it; the frame that raised first, then its callers,
each frame below the one it called by FRAME_STEP.

What the agent printed is the agent's to write: a traceback only chooses where to look, never credit.
Nothing here knows an agent: the traceback's form is Python's. Pure: records in, locations out.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from pathlib import Path, PurePosixPath

from evolve.meta.agentmap import agent_files
from evolve.meta.evidence import TaskRun
from evolve.meta.locations import Line, Location

__all__ = ["FRAME_STEP", "crashed", "frames"]

FRAME_STEP = 0.02
"""A caller's frame scores this much below the frame it called (the raising frame first among ties)."""

_HEADER = "Traceback (most recent call last):"
_FRAME = re.compile(r'^  File "([^"\n]+)", line (\d+), in ')


def crashed(code: Path, runs: Sequence[TaskRun]) -> list[Location]:
    """The lines of the agent's code (`code`, its root) in the tracebacks its failed evaluations ended with,
    scored by the share of failed evaluations that crashed through them, the raising frame first; [] where
    none crashed."""
    failed = [run for run in runs if run.outcome != "pass"]
    files = agent_files(code)
    stacks = [stack for run in failed if (stack := frames(run.agent_output, files)) is not None]
    if not stacks:
        return []
    held: Counter[Line] = Counter()
    depth: dict[Line, int] = {}
    said: dict[Line, str] = {}
    for lines, error in stacks:
        for place, line in enumerate(reversed(lines)):  # the raising frame first
            if line not in depth or place < depth[line]:
                depth[line] = place
            said.setdefault(line, error)
        held.update(set(lines))
    ranked = [
        Location(
            line[0],
            line[1],
            round(max(count / len(failed) - FRAME_STEP * depth[line], 0.0), 4),
            f"{count} of {len(failed)} failed evaluations ended with a traceback through this line "
            f"({'it raised' if depth[line] == 0 else 'a call from it raised'}: {said[line]})",
        )
        for line, count in held.items()
    ]
    return sorted(ranked, key=lambda location: (-location.score, location.path, location.line))


def frames(output: str, files: Sequence[str]) -> tuple[list[Line], str] | None:
    """The agent's lines in the last traceback `output` holds, outermost first, and the exception's line;
    None where it holds none or no frame of it is the agent's. A frame's file is the agent's where its path
    ends in an agent file's relative path (the agent may run from any directory)."""
    start = output.rfind(_HEADER)
    if start < 0:
        return None
    found: list[Line] = []
    error = ""
    for text in output[start + len(_HEADER) :].splitlines()[1:]:
        frame = _FRAME.match(text)
        if frame is not None:
            path = _agent_path(frame.group(1), files)
            if path is not None:
                found.append((path, int(frame.group(2))))
        elif not text.startswith(" ") and text.strip():
            error = text.strip()[:200]  # the exception and its message
            break
    return (found, error) if found else None


def _agent_path(path: str, files: Sequence[str]) -> str | None:
    """The agent file `path` names (the longest relative path it ends in), or None."""
    parts = PurePosixPath(path).parts
    ending = [file for file in files if _ends_in(parts, PurePosixPath(file).parts)]
    return max(ending, key=lambda file: len(PurePosixPath(file).parts), default=None)


def _ends_in(parts: tuple[str, ...], own: tuple[str, ...]) -> bool:
    return 0 < len(own) <= len(parts) and parts[len(parts) - len(own) :] == own
