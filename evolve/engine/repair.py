"""The engine's model repairs of one expansion: at each of the top `repair_locations` ranked lines, up to
`repairs` attempts at its function (`[meta] repairs`), each told why the ones before were refused; and at
each of the top `line_locations` ranked lines, `line_repairs` samples of the line itself, told the same
(evolve.meta.repair). Each is asked through a model channel of its own (the `modify` role, counted and
recorded by the gateway like any request), written as a child at a path a candidate's code takes, then
checked by evolve.engine.generate like every candidate.
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from evolve.archive.codetree import tree_entries, tree_id, write_entries
from evolve.engine.context import ChannelSpec, JobContext
from evolve.llm.gateway_http import post_unix
from evolve.meta.locations import Location
from evolve.meta.modify import Modification
from evolve.meta.repair import (
    Attempt,
    Unit,
    line_messages,
    line_spliced,
    repair_messages,
    source_of_test,
    spliced,
    unit_at,
)
from evolve.tasks.tree_diff import diff_entries
from evolve.untrusted import read_bytes

REPAIR_LOG = "repair.json"
"""A repair candidate's conversation and reply, in its log directory."""
SOURCE_BYTES = 200_000
"""The longest file a repair edits (agent code the host parses is the adversary's: the templates' bound)."""
MAX_TOKENS = 1024
"""A repair's reply is one unit of at most `UNIT_LINES` lines: this is room for it and no runaway."""
LINE_MAX_TOKENS = 160
"""A line repair's reply is at most LINE_REPLY_LINES lines."""


@dataclass
class Conversation:
    """The repair attempts at one ranked line during one expansion: what each was told and how it ended."""

    location: Location
    unit: Unit
    test: str = ""
    """The source of the first failing own test that ran the line ("": none)."""
    attempts: list[Attempt] = field(default_factory=list)

    def refused(self, reply: str, child: Modification, stage: str, reason: str) -> None:
        """The attempt that answered `reply` made `child`, refused at `stage`: the next one is told why (where
        the reply changed nothing, why it could not)."""
        self.attempts.append(Attempt(reply, stage, reason if child.diff.strip() else child.summary))


def conversations(
    code: Path, locations: tuple[Location, ...], count: int, *, code_only: bool = False, lines: bool = False
) -> list[Conversation]:
    """One conversation for each of the first `count` locations whose unit is not another's (two lines of one
    function are one repair; with `lines`, line repairs, two lines are two), in ranked order; a location in
    no parseable file of the agent is skipped, and with `code_only` (`[meta] require_code`, which refuses
    prompt edits) one whose unit is text only."""
    found: list[Conversation] = []
    for location in locations:
        if len(found) == count:
            break
        path = code / location.path
        if path.is_symlink() or not path.is_file() or path.suffix != ".py":
            continue
        source = _source(path)
        unit = unit_at(location.path, source, location.line) if source is not None else None
        if unit is None or any(_same(c, unit, location.line if lines else None) for c in found):
            continue
        if code_only and unit.prose:  # its rewrite could only be a prompt edit, which would be refused
            continue
        found.append(Conversation(location, unit, _test(code, location)))
    return found


def _same(conversation: Conversation, unit: Unit, line: int | None) -> bool:
    """`conversation` is already at `unit` (`line` given: at that line of it)."""
    here = (conversation.unit.path, conversation.unit.start)
    return here == (unit.path, unit.start) and (line is None or conversation.location.line == line)


def _test(code: Path, location: Location) -> str:
    """The source of the first of the location's failing tests, read from the agent's own files ("": none)."""
    if not location.tests:
        return ""
    path = location.tests[0].split("::", 1)[0]
    if path.startswith("/") or ".." in path.split("/") or not path.endswith(".py"):
        return ""
    file = code / path
    source = _source(file) if file.is_file() and not file.is_symlink() else None
    return (source_of_test(source, location.tests[0]) or "") if source is not None else ""


def repair_channel(job: str, number: int, tokens: int) -> ChannelSpec:
    """Repair attempt `number`'s model channel (the meta model's role)."""
    return ChannelSpec(f"{job}-repair-{number}", "modify", tokens)


def line_channel(job: str, number: int, tokens: int) -> ChannelSpec:
    """Line repair `number`'s model channel (the meta model's role)."""
    return ChannelSpec(f"{job}-line-{number}", "modify", tokens)


def make_repair(
    ctx: JobContext,
    conversation: Conversation,
    spec: ChannelSpec,
    temperature: float,
    problem: str,
    dest: Path,
    log_dir: Path,
    spent: list[int],
) -> tuple[Modification, str]:
    """Ask for the next attempt of `conversation` and write its child at `dest`: the child (the parent's code
    unchanged, with the reason in its summary, when the reply gave nothing to splice) and the reply."""
    messages = repair_messages(
        conversation.unit, conversation.location, conversation.attempts, problem, conversation.test
    )
    unit = conversation.unit
    reply, refused = _ask(ctx, spec, messages, temperature, MAX_TOKENS, log_dir, spent)
    source = _source(ctx.code / unit.path) or ""
    text, why = spliced(source, unit, reply) if not refused else (None, refused)
    where = f"repair at {unit.path}:{unit.start}-{unit.end}"
    return _written(ctx, unit.path, text, why, where, dest, log_dir), reply


def make_line_repair(
    ctx: JobContext,
    conversation: Conversation,
    spec: ChannelSpec,
    temperature: float,
    problem: str,
    dest: Path,
    log_dir: Path,
    spent: list[int],
) -> tuple[Modification, str]:
    """Ask what the ranked line of `conversation` should be, told how the earlier samples there ended, and
    write its child at `dest`: the child (the parent's code unchanged, with the reason in its summary, when
    the reply gave no line to put there) and the reply."""
    location = conversation.location
    messages = line_messages(conversation.unit, location, conversation.attempts, problem, conversation.test)
    reply, refused = _ask(ctx, spec, messages, temperature, LINE_MAX_TOKENS, log_dir, spent)
    source = _source(ctx.code / location.path) or ""
    text, why = line_spliced(source, location.line, reply) if not refused else (None, refused)
    where = f"line repair at {location.path}:{location.line}"
    return _written(ctx, location.path, text, why, where, dest, log_dir), reply


def _written(
    ctx: JobContext, path: str, text: str | None, why: str, where: str, dest: Path, log_dir: Path
) -> Modification:
    """The child with `path` rewritten as `text`; None: the parent's code unchanged, with `why` said."""
    if text is None:
        return edited_child(ctx.code, {}, dest, log_dir, f"{where}: {why}")
    return edited_child(ctx.code, {path: text}, dest, log_dir, where)


def _ask(
    ctx: JobContext,
    spec: ChannelSpec,
    messages: list[dict[str, str]],
    temperature: float,
    max_tokens: int,
    log_dir: Path,
    spent: list[int],
) -> tuple[str, str]:
    """The reply to `messages` through a model channel of its own (its tokens added to `spent`; the exchange
    logged in `log_dir`), and why there is none ("" when there is)."""
    request = {"messages": messages, "temperature": temperature, "max_tokens": max_tokens}
    channel = ctx.channels.open_job(spec.job, ctx.node_id, spec.role, spec.tokens)
    try:
        status, body = post_unix(
            str(channel.socket_path),
            "/v1/chat/completions",
            json.dumps(request).encode(),
            ctx.agent_timeout(),
        )
    finally:
        report = ctx.channels.close_job(spec.job)
        spent.append(report.usage.prompt_tokens + report.usage.completion_tokens)
    reply, refused = _reply(status, body)
    (log_dir / REPAIR_LOG).write_text(json.dumps({"messages": messages, "status": status, "reply": reply}))
    return reply, refused


def _source(path: Path) -> str | None:
    """A file of the parent's code as text (None: not UTF-8, or longer than a repair reads)."""
    data = read_bytes(path, SOURCE_BYTES + 1)
    try:
        return data.decode("utf-8") if len(data) <= SOURCE_BYTES else None
    except UnicodeDecodeError:
        return None


def _reply(status: int, body: bytes) -> tuple[str, str]:
    """The reply's text, and why there is none ("" when there is)."""
    try:
        answer = json.loads(body)
    except ValueError:
        return "", f"the gateway answered {status} with no JSON"
    if status != 200 or not isinstance(answer, dict):
        error = answer.get("error", answer) if isinstance(answer, dict) else answer
        return "", f"the gateway answered {status}: {str(error)[:300]}"
    try:
        return str(answer["choices"][0]["message"].get("content") or ""), ""
    except (KeyError, IndexError, TypeError, AttributeError):
        return "", "the gateway's answer held no message"


def edited_child(code: Path, files: dict[str, str], dest: Path, log_dir: Path, summary: str) -> Modification:
    """The parent's code at `code` with `files` (relative path: new text) replaced, written at `dest` as a
    child's is, its patch in `log_dir`."""
    parent = tree_entries(code)
    entries = dict(parent)
    for path, text in files.items():
        mode, _ = entries[os.fsencode(path)]
        entries[os.fsencode(path)] = (mode, text.encode("utf-8"))
    shutil.rmtree(dest, ignore_errors=True)
    write_entries(entries, dest)
    diff = diff_entries(parent, entries)
    (log_dir / "child.patch").write_text(diff)
    return Modification(dest, diff, tree_id(entries), 0, False, summary)
