"""What went wrong, computed from a node's recorded conversations and outcomes (never guessed by a model).

Before the diagnosis model is asked anything, this module counts failure patterns over the node's
evaluations: steps exhausted, replies the agent could not parse, no edit made, edits that broke the
checks, timeouts, edits to the wrong file, repeated replies, tool errors (`python: command not
found`), model errors, and what the agent kept from the model: replies cut at the token limit, requests
that left out the previous step or broke the chat's order of messages, failing commands shown without their
error output, edits to a file whose content the model was never shown, and no check of the agent's own.
Each pattern comes with its count, the tasks it touched and one short excerpt, so the diagnosis reads
"python: command not found, 18 times in 7 tasks" instead of one transcript.

The conversations are read from the gateway's exchanges (engine-written; the run's `exchanges/` and a
bundle's) or, where there are none, from the agent's own transcript. Either way they only inform the
meta step: no score, verdict or budget reads the evidence.
"""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path

from evolve import untrusted
from evolve.meta.profile import Markers, marked

_FENCE_KIND = re.compile(r"(?m)^```([A-Za-z][\w+-]{0,19})")
"""The word opening a reply's first fenced block at a line's start (```python, ```bash)."""
_TOOL_ERRORS = re.compile(
    r"(?m)^.*?(command not found|No such file or directory|ModuleNotFoundError: .*|Permission denied"
    r"|is a directory|Errno \d+.*)$"
)
"""Errors of the shell and the operating system, whatever agent ran the command."""
_SHELL_PREFIX = re.compile(r"^(bash: )?(line \d+: )?(-c: )?(line \d+: )?")
_BROKEN = re.compile(r"\b(SyntaxError|IndentationError|TabError)\b")
_DIFF_FILE = re.compile(r"^\+\+\+ b/(\S+)", re.MULTILINE)
_NAMED_FILE = re.compile(r"[\w./-]+\.(?:py|txt|md|json|toml|cfg|ya?ml|js|ts|c|h|cpp|go|rs|java|sh)\b")
STATUSES = ("submitted", "limits", "model_error")
"""The exit statuses the agent contract defines."""
SYMPTOMS = frozenset({"steps_exhausted", "no_edit", "repeated_reply"})
"""Patterns that follow from others (a cut reply also leaves no edit; a model with nothing new to go on
repeats itself): on a tie they rank after the rest, and computed instructions name a cause first."""
SEEN_LINE_CHARS = 12
"""Original lines of an edited file this long or longer count toward whether the model was shown it."""
PLACEHOLDERS = ("path/to/file.py", "path/to/file", "PATH")
EXCERPT_CHARS = 160
MAX_RECORD_BYTES = 8 << 20
"""A larger record (exchanges, transcript, diff, output) is read from its end, whole lines only."""


@dataclass(frozen=True)
class Turn:
    """One model reply and what the agent showed the model next (None after its last reply)."""

    reply: str
    output: str | None = None
    cut: bool = False
    """The reply stopped at the request's token limit (the gateway's finish_reason `length`)."""
    saw_previous: bool = True
    """The request that got this reply held the agent's previous reply (False: the conversation was cut)."""
    tool_calls: int = 0
    """Native tool calls in the reply (a reply form like a fenced block: an action to act on)."""
    disorder: str = ""
    """How the request that got this reply broke the chat's order of messages ("": it did not)."""


@dataclass(frozen=True)
class TaskRun:
    """One evaluation as the evidence reads it."""

    task: str
    outcome: str
    turns: tuple[Turn, ...]
    diff: str | None = None
    """The agent's diff; None where it was not recorded (a bundle keeps none)."""
    agent_output: str = ""
    """The agent's stdout/stderr (where its status marker may say how it ended)."""
    statement: str = ""
    status: str = ""
    """The agent's exit status where it recorded one (submitted | limits | model_error)."""
    prompt: str = ""
    """The first user message the model was sent (the task as the agent put it)."""
    exchanges: tuple[dict, ...] = ()
    """The gateway's records of the evaluation's job (request and response each), as provenance reads them."""
    markers: Markers = field(default_factory=Markers)
    """How the agent's own messages read, from its profile (evolve.meta.profile); none by default."""

    @property
    def edited(self) -> bool:
        """The agent changed a file (its diff, else its edit tools' answers where no diff was recorded)."""
        if self.diff is not None:
            return bool(self.diff.strip())
        return any(self.edited_files(turn.output or "") for turn in self.turns)

    def edited_files(self, output: str) -> list[str]:
        """The files an output of the agent's edit tools names (by its `edited` markers)."""
        return marked(self.markers.edited, output, "file")

    @property
    def exit_status(self) -> str:
        """submitted | limits | model_error, from its record or its output's status marker; "" if neither."""
        said = [s for s in marked(self.markers.status, self.agent_output, "status") if s in STATUSES]
        return self.status or (said[0] if said else "")


@dataclass(frozen=True)
class Pattern:
    """One failure pattern: how often, where, and one short example."""

    kind: str
    """steps_exhausted | unparsable_reply | no_edit | broke_checks | timeout | wrong_file |
    repeated_reply | tool_error | model_error | reply_cut | context_cut | misordered | silent_failure |
    unseen_file | no_check | weak_check."""
    label: str
    count: int
    """Occurrences (replies, outputs or evaluations, as the label says)."""
    tasks: tuple[str, ...]
    excerpt: str = ""
    passed: tuple[str, ...] = ()
    """The tasks of `tasks` whose evaluation passed: there the pattern did not make the agent fail."""

    @property
    def where(self) -> str:
        """`in 7 tasks, 3 of them passed`: how widespread, and how much of it was in failures."""
        passed = f", {len(self.passed)} of them passed" if self.passed else ""
        return f"in {_tasks(len(self.tasks))}{passed}"


REMEDIES = {
    "steps_exhausted": "ask for the edit sooner, so the steps are not spent before a change",
    "unparsable_reply": "accept the reply form the model actually sends (the example shows one) as an action",
    "no_edit": "ask for the edit explicitly, after the task and its check, and refuse to finish before a "
    "file changed",
    "broke_checks": "check each edit before keeping it and show the model the check's failure",
    "timeout": "fit each command's time limit to what it runs (a hung command stopped sooner, a check given "
    "the seconds it needs) and tell the model when one timed out",
    "wrong_file": "name the file to edit in the prompt, never a placeholder path",
    "repeated_reply": "tell the model when it repeats a reply and ask for a different action",
    "tool_error": "make the tool do what the model asked for",
    "model_error": "retry, or shorten, a request the model server refused",
    "reply_cut": "ask for replies long enough to hold a whole answer (a larger token limit)",
    "context_cut": "keep the latest steps in what is sent to the model: the conversation is cut too short",
    "misordered": "send the conversation in order: the system message first, then each reply followed by "
    "what the agent did with it, the newest last",
    "silent_failure": "show a command's error output beside its standard output",
    "unseen_file": "show the model the files the task names before asking for an edit",
    "no_check": "run the repository's checks and show the model their result, first and after each edit",
    "weak_check": "check what the task asks, not only that the code compiles (its examples, its tests)",
}
"""What usually removes each pattern in any LLM agent, said generally (shown with it, so a small diagnosis
model has a direction); which line of an agent to change is found from the data (evolve.meta.locate)."""


@dataclass(frozen=True)
class Evidence:
    evaluations: int
    failed: int
    patterns: tuple[Pattern, ...] = field(default_factory=tuple)
    """Most widespread in failures first (failed tasks touched, then tasks, then causes before SYMPTOMS,
    then occurrences)."""

    def render(self, limit: int = 8) -> str:
        """The evidence as the diagnosis prompt shows it: one line per pattern, its excerpt on the next."""
        head = f"Computed from {self.evaluations} evaluations of the agent ({self.failed} failed):"
        if not self.patterns:
            return head + "\n- no failure pattern found."
        lines = [head]
        for number, pattern in enumerate(self.patterns[:limit], 1):
            tasks = ", ".join(pattern.tasks[:4]) + (", ..." if len(pattern.tasks) > 4 else "")
            lines.append(f"{number}. {pattern.label}: {_times(pattern.count)} {pattern.where} ({tasks})")
            if pattern.excerpt:
                lines.append(f"   e.g. {pattern.excerpt}")
            if pattern.kind in REMEDIES:
                lines.append(f"   usual fix: {REMEDIES[pattern.kind]}")
        return "\n".join(lines)

    def to_json(self) -> dict:
        return {
            "evaluations": self.evaluations,
            "failed": self.failed,
            "patterns": [pattern.__dict__ for pattern in self.patterns],
        }


def _times(count: int) -> str:
    return "once" if count == 1 else f"{count} times"


def _tasks(count: int) -> str:
    return "1 task" if count == 1 else f"{count} tasks"


def one_line(text: str, limit: int = EXCERPT_CHARS) -> str:
    """Agent-written text on one quoted line (it cannot pass itself off as a line of the evidence)."""
    flat = " ".join(text.split())
    return json.dumps(flat if len(flat) <= limit else flat[: limit - 3] + "...")


def turns_from_exchanges(records: Iterable[dict]) -> tuple[Turn, ...]:
    """The conversation of one job from the gateway's exchanges: each reply, then the last message of
    the next request (what the agent showed the model after that reply), whether the reply was cut at
    the token limit, and whether its request held the reply before it."""
    recorded = [r for r in records if isinstance(r.get("response"), dict)]
    turns: list[Turn] = []
    for index, record in enumerate(recorded):
        reply = _content(_object(record["response"].get("message")).get("content"))
        output = None
        if index + 1 < len(recorded):
            output = _content((_messages(recorded[index + 1]) or [{}])[-1].get("content"))
        saw = not turns or any(
            m.get("role") == "assistant" and _content(m.get("content")) == turns[-1].reply
            for m in _messages(record)
        )
        calls = (record["response"].get("message") or {}).get("tool_calls")
        turns.append(
            Turn(
                reply,
                output,
                record["response"].get("finish_reason") == "length",
                saw,
                len(calls) if isinstance(calls, (list, tuple)) else 0,
                disorder(_messages(record)),
            )
        )
    return tuple(turns)


def disorder(messages: Sequence[dict]) -> str:
    """How a request's messages break the order every chat model is trained on ("": they do not): a system
    message after another role's, or two replies of the model in a row with nothing between them (what the
    agent did with the first never sent)."""
    roles = [m.get("role") for m in messages]
    if "system" in roles and roles[0] != "system":
        before = roles.index("system")
        return f"the system message comes after {before} other{'s' * (before != 1)}"
    pairs = sum(a == b == "assistant" for a, b in pairwise(roles))
    if pairs:
        return f"the model's replies twice in a row{f' ({pairs} times)' if pairs > 1 else ''}"
    return ""


def prompt_from_exchanges(records: Iterable[dict]) -> str:
    """The first user message of a job's first request."""
    for record in records:
        return next((_content(m.get("content")) for m in _messages(record) if m.get("role") == "user"), "")
    return ""


def _messages(record: dict) -> list[dict]:
    request = record.get("request")
    messages = request.get("messages") if isinstance(request, dict) else None
    return [m for m in messages if isinstance(m, dict)] if isinstance(messages, list) else []


def _object(value: object) -> dict:
    """`value` where it is a JSON object, else an empty one (a field of the wrong type reads as missing)."""
    return value if isinstance(value, dict) else {}


def _content(content: object) -> str:
    """A message's text (content parts joined)."""
    if isinstance(content, list):
        return "".join(str(part.get("text") or "") for part in content if isinstance(part, dict))
    return content if isinstance(content, str) else ""


def turns_from_transcript(records: Iterable[dict]) -> tuple[tuple[Turn, ...], str]:
    """The conversation and exit status from an agent's transcript (the seed's `transcript.jsonl`:
    messages with a role, events such as `{"event": "exit", "status": ...}`); it records what the agent
    kept, not what it sent, so nothing here is `cut` or unseen."""
    turns: list[Turn] = []
    pending: str | None = None
    status = ""
    for record in records:
        if record.get("event") == "exit":
            status = str(record.get("status") or "")
        role, content = record.get("role"), _content(record.get("content"))
        if role == "assistant" and "event" not in record:
            if pending is not None:
                turns.append(Turn(pending))
            pending = content
        elif role in ("user", "tool") and pending is not None:
            turns.append(Turn(pending, content))
            pending = None
    if pending is not None:
        turns.append(Turn(pending))
    return tuple(turns), status


def read_jsonl(text: str) -> list[dict]:
    """The JSON objects of a JSONL text; lines that are not bounded objects are skipped (agent-written
    files, read by evolve.untrusted)."""
    return [dict(record.fields) for record in untrusted.jsonl(text)]


def compute_evidence(runs: Sequence[TaskRun]) -> Evidence:
    """Count every pattern over `runs`; most widespread first."""
    # (kind, label) -> (run, excerpt)
    hits: dict[tuple[str, str], list[tuple[TaskRun, str]]] = defaultdict(list)
    for run in runs:
        for kind, label, excerpt in _patterns_of(run):
            hits[(kind, label)].append((run, excerpt))
    patterns = []
    for (kind, label), found in hits.items():
        tasks = tuple(dict.fromkeys(run.task for run, _ in found))
        failed = {run.task for run, _ in found if run.outcome != "pass"}
        patterns.append(
            Pattern(
                kind,
                label,
                len(found),
                tasks,
                next((excerpt for _, excerpt in found if excerpt), ""),
                tuple(task for task in tasks if task not in failed),
            )
        )
    # Failed tasks touched first: a pattern as common in passes as in failures is not what made the agent
    # fail.
    patterns.sort(
        key=lambda p: (
            len(p.passed) - len(p.tasks),
            -len(p.tasks),
            p.kind in SYMPTOMS,
            -p.count,
            p.kind,
            p.label,
        )
    )
    return Evidence(len(runs), sum(run.outcome != "pass" for run in runs), tuple(patterns))


def _patterns_of(run: TaskRun) -> Iterable[tuple[str, str, str]]:
    """(kind, label, excerpt) for each occurrence in one evaluation."""
    status = run.exit_status
    last = run.turns[-1].reply if run.turns else ""
    if status == "limits":
        yield "steps_exhausted", "the agent ran out of steps", f"its last reply: {one_line(last)}"
    if status == "model_error":
        yield "model_error", "the model call failed", one_line(run.agent_output[-300:])
    if run.outcome == "timeout":
        yield "timeout", "the evaluation timed out", f"its last reply: {one_line(last)}"
    if run.outcome != "pass" and not run.edited:
        yield "no_edit", "the agent changed no file", f"its last reply: {one_line(last)}"
    seen: Counter[str] = Counter()
    passing = False
    markers = run.markers
    canned = fixed_answers(run.turns)
    for step, turn in enumerate(run.turns, 1):
        where = f"step {step}"
        key = " ".join(turn.reply.split())
        seen[key] += 1
        if seen[key] == 2:
            yield "repeated_reply", "a reply repeated word for word", f"{where}: {one_line(turn.reply)}"
        answered = " ".join((turn.output or "").split())
        if ("```" not in turn.reply and not turn.tool_calls) or answered in canned:
            fence = _FENCE_KIND.search(turn.reply)  # the form the model sends, so the fix can name it
            what = f"a ```{fence[1]} block" if fence else "a reply"
            yield "unparsable_reply", f"{what} the agent could not act on", f"{where}: {one_line(turn.reply)}"
        output = turn.output or ""
        for line in dict.fromkeys(m[0].strip() for m in _TOOL_ERRORS.finditer(output)):
            label = re.sub(r"\d+", "N", _SHELL_PREFIX.sub("", line))
            yield (
                "tool_error",
                f"tool error {one_line(label, 80)}",
                f"{where}: {one_line(turn.reply, 100)} -> {one_line(line, 100)}",
            )
        if markers.timed_out is not None and (timed_out := markers.timed_out.search(output)):
            yield (
                "timeout",
                "a command timed out",
                f"{where}: {one_line(turn.reply, 100)} -> {one_line(timed_out[0])}",
            )
        if markers.check is not None and (check := markers.check.search(output)) is not None:
            failing = check["code"] != "0"
            if _BROKEN.search(output) or (passing and failing):
                yield "broke_checks", "an edit broke the checks", f"{where}: {one_line(output[-200:])}"
            passing = not failing
    for path in _wrong_files(run):
        yield "wrong_file", f"an edit to a file the task does not name ({path})", ""
    for step, turn in enumerate(run.turns, 1):
        if turn.cut:
            yield (
                "reply_cut",
                "a reply cut off at the token limit",
                f"step {step}, its end: {one_line(turn.reply[-100:])}",
            )
        if not turn.saw_previous:
            yield "context_cut", "a request that left out the agent's previous step", f"step {step}"
        if turn.disorder:
            yield (
                "misordered",
                "a request whose messages break the chat's order",
                f"step {step}: {turn.disorder}",
            )
        silent = markers.silent and markers.silent.search((turn.output or "").strip())
        if silent and int(silent["code"]) != 0:
            yield (
                "silent_failure",
                "a failing command shown with no output but its exit code",
                f"step {step}: {one_line(turn.reply, 100)} -> {one_line((turn.output or '')[-100:])}",
            )
    if (weak := weak_check(run)) is not None:
        yield (
            "weak_check",
            f"its own check `{one_line(weak, 60)[1:-1]}` passed, the task failed",
            f"its last reply: {one_line(last, 100)}",
        )
    if run.prompt:  # how the agent worked, whatever the outcome (a pass without checks was luck)
        for path in _unseen_files(run):
            yield "unseen_file", "an edit to a file whose content the model was never shown", one_line(path)
        if (
            markers.check is not None
            and run.turns
            and not any(
                markers.check.search(text or "") for text in [run.prompt, *(t.output for t in run.turns)]
            )
        ):
            yield (
                "no_check",
                "no check ran: the model never saw the tests' result",
                f"the task as sent: {one_line(run.prompt, 100)}",
            )


def weak_check(run: TaskRun) -> str | None:
    """The command of the agent's own check that passed last in an evaluation whose task failed (not by
    timing out): a check that did not test what the task asks; None where there is none."""
    checked = run.markers.checked  # the agent's check and its exit code, by its own markers
    if run.outcome in ("pass", "timeout") or checked is None:
        return None
    texts = [run.prompt, *(t.output for t in run.turns)]
    checks = [check for text in texts for check in checked.finditer(text or "")]
    return checks[-1]["command"] if checks and checks[-1]["code"] == "0" else None


def fixed_answers(turns: Sequence[Turn]) -> set[str]:
    """What the agent answered different replies of one run with, word for word (whitespace aside), with no
    digit in it: a fixed text of its own, not the result of an action (a command's or an edit's result
    carries an exit code, a count or a line number), so it did not act on those replies."""
    replies: dict[str, set[str]] = defaultdict(set)
    for turn in turns:
        if turn.output and turn.output.strip() and not any(c.isdigit() for c in turn.output):
            replies[" ".join(turn.output.split())].add(" ".join(turn.reply.split()))
    return {answer for answer, different in replies.items() if len(different) > 1}


def _wrong_files(run: TaskRun) -> list[str]:
    """Files the agent edited that the task does not name (a placeholder path always counts)."""
    edited = _DIFF_FILE.findall(run.diff or "") + [
        m for t in run.turns for m in run.edited_files(t.output or "")
    ]
    named = set(_NAMED_FILE.findall(run.statement))
    wrong = [
        p
        for p in dict.fromkeys(edited)
        if p in PLACEHOLDERS
        or p.startswith("path/to/")
        or (named and p not in named and not any(p.endswith("/" + n) for n in named))
    ]
    return wrong


def _unseen_files(run: TaskRun) -> list[str]:
    """Files the agent's diff changed (not created) fewer than half of whose original lines (the diff's
    context and removed lines of SEEN_LINE_CHARS or more) appear in anything the model was shown."""
    shown = "\n".join([run.prompt, *(turn.output or "" for turn in run.turns)])
    unseen = []
    for section in re.split(r"(?m)^diff --git ", run.diff or ""):
        path = _DIFF_FILE.search(section)
        if path is None or re.search(r"(?m)^--- /dev/null", section):
            continue
        old = [
            line[1:].strip()
            for line in section.splitlines()
            if line[:1] in (" ", "-")
            and not line.startswith("---")
            and len(line[1:].strip()) >= SEEN_LINE_CHARS
        ]
        if old and 2 * sum(line in shown for line in old) < len(old):  # a traceback shows a line or two
            unseen.append(path[1])
    return unseen


CONVERSATION_TEXT_CHARS = 1_200
"""A reply, output or prompt in `conversations_jsonl` longer than this keeps its start and its end."""


def conversations_jsonl(runs: Sequence[TaskRun], limit: int) -> str:
    """The evaluations as the agent-side meta procedure counts them itself (where its code does): one
    JSON object a line (task, outcome, exit status, whether it edited, the task as sent, each turn's reply,
    what the agent showed next, `cut` and `saw_previous`); failed evaluations first, whole lines up to `limit`
    characters. Only what the agent and its model saw: no grader output."""
    lines, size = [], 0
    for run in sorted(runs, key=lambda r: r.outcome == "pass"):
        line = json.dumps(
            {
                "task": run.task,
                "outcome": run.outcome,
                "status": run.exit_status,
                "edited": run.edited,
                "prompt": _ends(run.prompt),
                "turns": [
                    {
                        "reply": _ends(t.reply),
                        "output": None if t.output is None else _ends(t.output),
                        "cut": t.cut,
                        "saw_previous": t.saw_previous,
                    }
                    for t in run.turns
                ],
            }
        )
        if size + len(line) + 1 > limit:
            break
        lines.append(line)
        size += len(line) + 1
    return "".join(line + "\n" for line in lines)


def _ends(text: str, limit: int = CONVERSATION_TEXT_CHARS) -> str:
    half = limit // 2
    return (
        text
        if len(text) <= limit
        else f"{text[:half]}\n[... {len(text) - 2 * half} characters ...]\n{text[-half:]}"
    )


def read_record(path: Path | None) -> str | None:
    """A record's text (exchanges, transcript, diff, output), a larger one than MAX_RECORD_BYTES from its end
    (whole lines only); None where there is no such file."""
    if path is None or not path.is_file():
        return None
    text = untrusted.read_text(path, MAX_RECORD_BYTES, tail=True)  # agent-written: bounded, never raises
    return text.split("\n", 1)[-1] if path.stat().st_size > MAX_RECORD_BYTES else text


def read_records(path: Path | None) -> list[dict]:
    """A JSONL record's objects (exchanges, transcript), a larger one than MAX_RECORD_BYTES from its end
    (each request repeats the conversation); a line that is no bounded object is skipped
    (evolve.untrusted)."""
    bounds = untrusted.Bounds(file_bytes=MAX_RECORD_BYTES)
    return [dict(record.fields) for record in untrusted.read_jsonl(path, bounds)]


def recorded_run(
    task: str,
    outcome: str,
    log_dir: Path | None,
    exchanges: Path | None,
    statement: str = "",
    markers: Markers | None = None,
) -> TaskRun:
    """One evaluation as recorded: its conversation from the gateway's exchanges when there are any,
    else from the agent's transcript; its diff and output from its log directory; `markers`: how the
    agent's own messages read (its profile's)."""
    exchanged = read_records(exchanges)
    turns = turns_from_exchanges(exchanged)
    records = read_records(log_dir and log_dir / "transcript.jsonl")
    transcript, status = turns_from_transcript(records)
    prompt = (
        prompt_from_exchanges(exchanged)
        if turns
        else next((_content(r.get("content")) for r in records if r.get("role") == "user"), "")
    )
    return TaskRun(
        task,
        outcome,
        turns or transcript,
        read_record(log_dir and log_dir / "diff.patch"),
        read_record(log_dir and log_dir / "agent.log") or "",
        statement,
        status,
        prompt,
        tuple(exchanged),
        markers or Markers(),
    )
