"""Where an agent builds the conversation it sent out of order: a location source from its recorded requests.

Every chat model is trained on one order of messages: the system message first, then each reply of the
model followed by what the agent did with it. An agent that reverses the conversation, or drops the result
of each action so its replies follow one another, still runs, and every line that does it runs in passing
evaluations as in failing ones, so spectra rank it no higher than any other, and what it left out is no
text the provenance of messages can trace. The recorded requests say it (evolve.meta.evidence's
`misordered`), and the chat protocol says where an agent writes its conversation: the dict displays that
build a message (a `"role"` key) and those and the calls that send the list (a `"messages"` key or keyword).
Those lines are ranked at the share of failed evaluations that sent such a request.

Nothing here knows an agent: the keys are the chat API's own, which every agent that talks to the gateway
writes. Pure: files and records in, locations out.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Iterator, Sequence
from pathlib import Path

from evolve import syntax
from evolve.meta.agentmap import agent_files
from evolve.meta.evidence import REMEDIES, TaskRun
from evolve.meta.locations import Location
from evolve.untrusted import read_text

__all__ = ["CHAT_KEYS", "misordered"]

CHAT_KEYS = frozenset({"role", "messages"})
"""The chat API's keys that mark where a message is built (`role`) or the conversation sent (`messages`)."""


def misordered(code: Path, runs: Sequence[TaskRun]) -> list[Location]:
    """The lines of the agent's code (`code`, its root) that build a chat message or send the conversation,
    scored by the share of failed evaluations that sent the model a request out of the chat's order, with
    how the first broke it; [] where none did."""
    failed = [run for run in runs if run.outcome != "pass"]
    broken = [
        next(t.disorder for t in run.turns if t.disorder)
        for run in failed
        if any(t.disorder for t in run.turns)
    ]
    if not broken:
        return []
    share = round(len(broken) / len(failed), 4)
    evidence = (
        f"{len(broken)} of {len(failed)} failed evaluations sent the model a request out of the chat's order "
        f"({json.dumps(broken[0])}); here a message is built or the conversation is sent "
        f"(usual fix: {REMEDIES['misordered']})"
    )
    return [
        Location(path, line, share, evidence)
        for path in agent_files(code)
        if (tree := syntax.parsed(read_text(code / path))) is not None
        for line in sorted(set(chat_lines(tree)))
    ]


def chat_lines(tree: ast.Module) -> Iterator[int]:
    """The lines of a module that build a chat message or send a conversation: a dict display with a
    `"role"` or `"messages"` key, a `messages=` keyword argument, an item `"messages"` stored."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Dict):
            for key in node.keys:
                if isinstance(key, ast.Constant) and key.value in CHAT_KEYS:
                    yield key.lineno
        elif (
            isinstance(node, ast.keyword)
            and node.arg == "messages"
            or (
                isinstance(node, ast.Subscript)
                and isinstance(node.ctx, ast.Store)
                and isinstance(node.slice, ast.Constant)
                and node.slice.value == "messages"
            )
        ):
            yield node.lineno
