"""Where an agent writes the exit status it showed the model alone: a location source from its own outputs.

An agent that writes a command's result as its output and then its exit status loses the output where one
stream is left out of that text: a failing check shows the model `[exit code 1]` and nothing of what failed.
The line that writes it runs in every evaluation, passed or failed, so spectra rank it no higher than any
other, and its literal pieces are too short for the provenance of whole messages
(evolve.meta.provenance). Here the status line each failed evaluation showed is read with the agent's own
`exit` marker, and the agent's literals holding the text before the code are the places.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from evolve import syntax
from evolve.meta.agentmap import agent_files
from evolve.meta.evidence import REMEDIES, TaskRun
from evolve.meta.locations import Location
from evolve.meta.provenance import flat, texts_of
from evolve.untrusted import read_text

__all__ = ["SHOWN_PIECE", "shown"]

SHOWN_PIECE = 6
"""The shortest literal piece `shown` matches: inside the line that shows an exit status (the agent's own
marker text, not a whole message) a short piece ("[exit code") still says where it was written."""


def shown(code: Path, runs: Sequence[TaskRun]) -> list[Location]:
    """The places that wrote the exit status by which failed evaluations showed the model a failing command
    with nothing but that status (evolve.meta.evidence's silent failure, read with the agent's own `silent`
    marker): the string constants and f-strings of the agent's code (`code`, its root) holding the text just
    before the status's code on its line, scored by the share of failed evaluations that showed one. Where the
    status is written, the command's output was left out of what the model saw. [] where none showed one or
    the agent declares no such marker."""
    failed = [run for run in runs if run.outcome != "pass"]
    before: list[str] = []  # per failed evaluation that showed one: the text before its first such code
    example = ""  # the first status line shown
    for run in failed:
        silent = run.markers.silent
        for turn in run.turns if silent is not None else ():
            output = (turn.output or "").strip()
            found = silent.search(output) if silent is not None else None
            if found is not None and found["code"] is not None and int(found["code"]) != 0:
                start, opens = found.start("code"), output.rfind("\n", 0, found.start("code")) + 1
                before.append(flat(output[opens:start]))
                example = example or flat(output[opens:].split("\n")[0])
                break
    if not before:
        return []
    share = round(len(before) / len(failed), 4)
    texts = [
        text
        for path in agent_files(code)
        if (tree := syntax.parsed(read_text(code / path))) is not None
        for text in texts_of(path, tree, SHOWN_PIECE)
    ]
    evidence = (
        f"{len(before)} of {len(failed)} failed evaluations showed the model a failing command with nothing "
        f"but its exit status ({json.dumps(example)}); here that status is written, so here the "
        f"command's output is left out (usual fix: {REMEDIES['silent_failure']})"
    )
    return [
        Location(text.path, text.line, share, evidence)
        for text in texts
        if any(piece in seen for piece in text.pieces for seen in before)
    ]
