"""`python -m agent improve`: edit the agent's own code by the instructions, and never leave it broken.

First the usual step loop, on a short view of the agent (the files the instructions name, else
agent/prompts.py). An edit that breaks the agent's tests is reverted. When the loop changed nothing
(weak models often echo instead of editing), the last step asks for one sentence of advice and adds it
to agent/lessons.py, which the solve prompt shows: a small change, but a real one, that the search can
keep or drop by its results.
"""

from __future__ import annotations

import ast
import dataclasses
import re
from pathlib import Path

from agent import prompts
from agent.context import list_files, view_self
from agent.loop import Agent
from agent.model import Message
from agent.tools import top_level_names

LESSONS_FILE = "agent/lessons.py"
MAX_LESSONS = 8
LESSON_CHARS = 200
LESSONS_DOC = '''"""What the agent has learned about its own failures: each `improve` may add one line (newest last).

The solve prompt shows them, so a lesson changes how the agent works. This file is rewritten by
`agent.improve.learn`; keep it a single list of strings.
"""
'''


def improve(agent: Agent, instructions: str) -> str:
    """Returns the loop's exit status (submitted | limits | stuck | model_error)."""
    root = agent.workspace.root
    budget = agent.config.max_steps
    view = view_self(root, instructions)
    before = snapshot(root)  # edits by shell commands count too, not only the editor's
    status = "limits"
    if budget > 1:
        agent.config = dataclasses.replace(agent.config, max_steps=budget - 1)  # the last step may learn
        status = agent.run(instructions, prompts.IMPROVE, view)
        agent.config = dataclasses.replace(agent.config, max_steps=budget)
    if changed(root, before):
        ok, _ = agent.check(view)
        if not ok:
            agent.log({"event": "reverted", "files": restore(root, before),
                       "detail": "the agent's own tests fail after the edit"})
    if not changed(root, before) and status != "model_error" and agent.steps < budget:
        learn(agent, instructions)
    agent.log({"event": "improved", "changed": changed(root, before)})
    return status


def snapshot(root: Path) -> dict[str, bytes]:
    return {name: (root / name).read_bytes() for name in list_files(root, limit=2000)}


def changed(root: Path, before: dict[str, bytes]) -> list[str]:
    """The files added, removed or edited since `before`."""
    now = snapshot(root)
    return sorted(name for name in before.keys() | now.keys() if before.get(name) != now.get(name))


def restore(root: Path, before: dict[str, bytes]) -> list[str]:
    """Put the files back as they were in `before` (new ones removed); returns the files restored."""
    touched = changed(root, before)
    for name in touched:
        if name in before:
            (root / name).write_bytes(before[name])
        else:
            (root / name).unlink()
    return touched


def learn(agent: Agent, instructions: str) -> str | None:
    """Ask for one sentence of advice and append it to the lessons; returns the lesson, or None."""
    agent.steps += 1
    ask = Message("user", prompts.LESSON.format(problem=instructions.strip()[:1500]))
    agent.add(ask)
    reply = agent.model.query([ask], None)
    agent.add(Message("assistant", reply.content))
    lesson = clean_lesson(reply.content)
    path = agent.workspace.root / LESSONS_FILE
    learned = read_lessons(path.read_text()) if path.exists() else []
    if lesson is None or lesson in learned:
        agent.log({"event": "no_lesson", "detail": "no usable sentence" if lesson is None else "already known"})
        return None
    agent.workspace.write(LESSONS_FILE, render_lessons_file([*learned, lesson][-MAX_LESSONS:]))
    agent.log({"event": "lesson", "lesson": lesson})
    return lesson


def clean_lesson(reply: str) -> str | None:
    """The first sentence of the first sentence-like line of a reply, without fences, bullets or quotes;
    None if there is none."""
    for line in reply.splitlines():
        line = line.strip().strip("`").strip().strip("\"'")
        line = re.sub(r"^(?:[-*•>]|\d+[.)])\s*", "", line).strip().strip("\"'")
        line = re.sub(r"\s+", " ", line)
        first = re.split(r"(?<=[.!?])\s+(?=[A-Z])", line, maxsplit=1)[0]
        line = first if len(re.findall(r"[A-Za-z]{2,}", first)) >= 3 else line
        if len(re.findall(r"[A-Za-z]{2,}", line)) >= 3 and not line.lower().startswith(("python", "bash", "write", "replace")):
            if len(line) > LESSON_CHARS:
                line = line[:LESSON_CHARS].rsplit(" ", 1)[0] + " ..."
            return line
    return None


def read_lessons(source: str) -> list[str]:
    """The LESSONS list of a lessons file; an unreadable file counts as none learned."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    node = top_level_names(tree).get("LESSONS")
    if node is None or node.value is None:
        return []
    try:
        value = ast.literal_eval(node.value)
    except ValueError:
        return []
    return [str(v) for v in value] if isinstance(value, (list, tuple)) else []


def render_lessons_file(learned: list[str]) -> str:
    items = "".join(f"    {line!r},\n" for line in learned)
    return f"{LESSONS_DOC}\nLESSONS: list[str] = [\n{items}]\n" if learned else f"{LESSONS_DOC}\nLESSONS: list[str] = []\n"
