"""Diagnose a problem into structured improvement instructions with the `diagnose` model."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from evolve.errors import EvolveError
from evolve.meta.agentmap import AgentMap, agent_map
from evolve.meta.codenotes import code_notes
from evolve.meta.evidence import REMEDIES, SYMPTOMS, Evidence
from evolve.meta.problems import Problem

SYSTEM = (
    "You improve a coding agent: a small Python program that drives a language model to solve tasks. You "
    "are shown what went wrong in its recent tasks, counted from its transcripts, and a map of its code. "
    "Choose the one change to the agent's own code that would remove the most failures; never change a "
    "task, its code or its tests. Reply with one JSON object with the keys target (one name exactly as the "
    "map lists it, file and name joined by a colon), change (what to change there, concretely, in one or "
    "two sentences), problem (the failure it removes) and cause (why the agent fails so)."
)
FIELDS = ("target", "change", "problem", "cause")
_FENCE = re.compile(r"```(?:json)?\s*(\{.*?\})\s*```", re.DOTALL)
_OBJECT = re.compile(r"\{.*\}", re.DOTALL)
_LINES = re.compile(r"^\W*(target|change|problem|cause)\W*:\s*(.+)$", re.IGNORECASE | re.MULTILINE)
_TARGET_LINE = re.compile(r"^Target: (\S+)$", re.MULTILINE)
_TASK_NAMES = re.compile(r"\bdef (\w+)|`(\w+)`")
MIN_CHANGE_WORDS = 4
"""A shorter change ("No file changed") says nothing the improve step can do."""
EVIDENCE_PATTERNS = 8
"""Patterns of the computed evidence shown to the diagnosis model (most widespread first)."""

Complete = Callable[..., str]
"""`complete(messages, temperature=None)`: messages (OpenAI style) in, the reply text out; a temperature
of None is the role's configured one."""

RETRY_TEMPERATURE = 0.8
"""A retry is sampled hotter: a small model asked again at a low temperature repeats its reply."""


class DiagnosisFailed(EvolveError):
    """The model gave no usable instructions after every retry."""


@dataclass(frozen=True)
class Instructions:
    """What the agent should change in itself, where, and why."""

    problem: str
    cause: str
    change: str
    files: tuple[str, ...] = ()
    target: str = ""
    """One name of the agent's map (`agent/tools.py:Workspace.bash`, or a file of it), canonical."""
    evidence: str = ""
    """The computed evidence's lines that the change answers (the head of `Evidence.render`)."""
    source: str = "model"
    """model (the diagnosis model's reply) | evidence (no usable reply: `from_evidence`)."""
    kind: str = ""
    """The evidence pattern the change answers (`Pattern.kind`; computed instructions only)."""
    lines: str = ""
    """The target file's lines that decide that pattern under a header naming the file and their numbers
    (`deciding_lines`)."""
    notes: tuple[str, ...] = ()
    """What the target's code shows (evolve.meta.codenotes: a value computed and never used, a bound of 0)."""

    def render(self) -> str:
        """The instructions file handed to `python -m agent improve` (its `Target:` line: `target_of`)."""
        files = "\n".join(f"- {name}" for name in self.files) or "- (the agent decides)"
        target = f"Target: {self.target}\n\n" if self.target else ""
        lines = f"{self.lines}\n\n" if self.lines else ""
        if self.notes:
            lines += "What its code shows:\n" + "".join(f"- {note}\n" for note in self.notes) + "\n"
        evidence = f"\n\nWhat went wrong, counted:\n{self.evidence}" if self.evidence else ""
        return (f"Problem: {self.problem}\n\nLikely cause: {self.cause}\n\n{target}Change to make: {self.change}\n\n"
                f"{lines}Files to look at:\n{files}{evidence}\n")

    def to_json(self) -> dict:
        return {"target": self.target, "change": self.change, "problem": self.problem, "cause": self.cause,
                "files": list(self.files), "source": self.source, "kind": self.kind, "lines": self.lines,
                "notes": list(self.notes)}


REPLY_CHARS = {"change": 400, "problem": 200, "cause": 200}
"""The longest each text field may be under `reply_format` (with the target, within 256 tokens)."""
MAX_FORMAT_CHARS = 12_000
"""A larger map lists no targets in the format (the gateway caps a schema at 16,384 characters)."""


def reply_format(agent: AgentMap) -> dict:
    """The reply's shape as OpenAI's `response_format`: one JSON object of FIELDS whose target is one of the
    map's names, for providers that constrain a reply to it (the embedded server compiles it to a grammar;
    others are sent no format and the reply is checked as ever)."""
    target: dict = {"type": "string", "enum": list(agent.targets())}
    if len(json.dumps(target)) > MAX_FORMAT_CHARS or not target["enum"]:
        target = {"type": "string"}
    texts = {key: {"type": "string", "maxLength": size} for key, size in REPLY_CHARS.items()}
    schema = {"type": "object", "properties": {"target": target, **texts}, "required": list(FIELDS),
              "additionalProperties": False}
    return {"type": "json_schema", "json_schema": {"name": "diagnosis", "strict": True, "schema": schema}}


def target_of(instructions: str) -> str | None:
    """The target named by rendered instructions (their `Target: FILE:NAME` line), or None."""
    match = _TARGET_LINE.search(instructions)
    return match[1] if match else None


def prompt(problem: Problem, agent: AgentMap | Sequence[str], evidence: Evidence | None = None) -> list[dict]:
    """The diagnosis request: the computed evidence, one failure in detail, the agent's map (short,
    because small models read slowly; golden-tested). A list of file names stands in for a map."""
    parts = []
    if evidence is not None:
        parts.append(f"What went wrong, counted from the agent's transcripts:\n{evidence.render(EVIDENCE_PATTERNS)}")
        if isinstance(agent, AgentMap) and (arising := _arising(evidence, agent)):
            parts.append(f"Where these patterns arise in this agent's code:\n{arising}")
    parts.append(f"One failure in detail: {problem.summary}")
    if problem.statement:
        parts.append(f"The task it was given:\n{problem.statement[:1000]}")
    if problem.transcript_tail:
        parts.append(f"The end of what the agent saw and did:\n{problem.transcript_tail}")
    if problem.agent_output:
        parts.append(f"The agent's own output:\n{problem.agent_output}")
    if isinstance(agent, AgentMap):
        parts.append(f"The map of the agent's code (name the target as listed):\n"
                     f"{agent.render(summaries=False, qualified=True)}")
    else:
        parts.append(f"The agent's files: {', '.join(agent)}")
    parts.append("Reply with the JSON object only.")
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "\n\n".join(parts)}]


def _arising(evidence: Evidence, agent: AgentMap) -> str:
    """`N. target` for each shown pattern whose responsible part (RESPONSIBLE) the agent's map still has."""
    lines = []
    for number, pattern in enumerate(evidence.patterns[:EVIDENCE_PATTERNS], 1):
        if target := responsible(agent, pattern.kind):
            lines.append(f"{number}. {target}")
    return "\n".join(lines)


def reply_object(reply: str) -> dict:
    """The JSON object in a model's reply (a fenced block, else the outermost braces); ValueError if none."""
    match = _FENCE.search(reply) or _OBJECT.search(reply)
    if match is None:
        raise ValueError("the reply holds no JSON object")
    try:
        data = json.loads(match.group(1) if match.re is _FENCE else match.group(0))
    except json.JSONDecodeError as exc:
        raise ValueError(f"the JSON does not parse: {exc}") from None
    if not isinstance(data, dict):
        raise ValueError("the JSON is not an object")  # noqa: TRY004 - callers catch ValueError (a bad reply)
    return data


def _fields(reply: str) -> dict:
    """The reply's JSON object, else its `Target: ...`/`Change: ...` lines (small models drop the braces)."""
    try:
        return reply_object(reply)
    except ValueError:
        lines = {key.lower(): value.strip() for key, value in _LINES.findall(reply)}
        if "change" not in lines:
            raise
        return lines


def parse_instructions(reply: str, agent: AgentMap | None = None, task_text: str = "",
                       echoes: Sequence[str] = ()) -> Instructions:
    """The instructions in a reply; ValueError says what is wrong with them.

    With the agent's map, the target must name one of its functions, classes, methods, constants or
    files with something in them (canonicalized), and the change must say something: at least
    MIN_CHANGE_WORDS words, not a repeat of one of `echoes` (what the prompt said went wrong), not
    about the task's own code (`task_text`: the statements shown, whose function names it may not name)."""
    data = _fields(reply)
    change = data.get("change")
    if not isinstance(change, str) or not change.strip():
        raise ValueError('"change" must be a non-empty string saying what to change')
    files = data.get("files") or []
    if isinstance(files, str):
        files = [files]
    if not isinstance(files, list) or not all(isinstance(f, str) for f in files):
        raise ValueError('"files" must be a list of file names')
    text = {key: value if isinstance(value := data.get(key), str) else "" for key in ("problem", "cause", "target")}
    target = text["target"].strip()
    if agent is not None:
        target = _checked_target(agent, target, files)
        files = [target.partition(":")[0]]
        _check_change(change, echoes)
        _check_not_task_code(change, agent, task_text)
    return Instructions(text["problem"].strip(), text["cause"].strip(), change.strip(), tuple(files), target)


def _checked_target(agent: AgentMap, written: str, files: Sequence[str]) -> str:
    if not written and len(files) == 1:
        written = files[0]  # an older reply schema: one file and no target
    if not written:
        raise ValueError('"target" is missing: name one function, class, method or constant from the map')
    # a file counts too, unless it defines nothing while other files do (the 0.5B model named agent/__init__.py)
    scripts = not any(f.symbols for f in agent.files)
    found = agent.resolve(written) or next((f.path for f in agent.files if (f.symbols or scripts)
                                            and f.path == written.strip(" `'\"")), None)
    if found is None:
        raise ValueError(f'"target" {written[:80]!r} is not part of the agent (task code, or not in the map); '
                         "name one function, class, method or constant from the map, as it lists it")
    return found


def _check_change(change: str, echoes: Sequence[str]) -> None:
    if len(change.split()) < MIN_CHANGE_WORDS:
        raise ValueError('"change" is too short: say concretely what to change in the target')
    flat = " ".join(change.lower().strip(" .").split())
    if any(flat == " ".join(echo.lower().strip(" .").split()) for echo in echoes if echo):
        raise ValueError('"change" repeats what went wrong: say what to change in the target to prevent it')


def _check_not_task_code(change: str, agent: AgentMap, task_text: str) -> None:
    ours = {s.name.rsplit(".", 1)[-1] for f in agent.files for s in f.symbols}
    theirs = {name for pair in _TASK_NAMES.findall(task_text) for name in pair if name and name not in ours}
    named = sorted(name for name in theirs if len(name) > 3 and re.search(rf"\b{re.escape(name)}\b", change))
    if named:
        raise ValueError(f"the change is about the task's own code ({', '.join(named)}), not the agent's: "
                         "say what to change in the agent so that it solves such tasks")


RESPONSIBLE: dict[str, str | tuple[str, ...]] = {
    "tool_error": "agent/tools.py:Workspace.bash",
    "timeout": "agent/tools.py:Workspace.bash",
    "unparsable_reply": ("agent/repairs.py:parse", "agent/loop.py:parse"),
    "repeated_reply": "agent/loop.py:Agent.step",
    "steps_exhausted": "agent/loop.py:Agent.run",
    "broke_checks": "agent/loop.py:Agent.act",
    "no_edit": ("agent/repairs.py:NUDGE", "agent/commands.py:solve"),
    "wrong_file": "agent/prompts.py:SYSTEM",
    "model_error": "agent/model.py:Model.query",
    "reply_cut": "agent/model.py:Model.query",
    "context_cut": "agent/loop.py:Agent.context",
    "silent_failure": "agent/tools.py:Workspace.bash",
    "unseen_file": "agent/commands.py:solve",
    "no_check": "agent/commands.py:solve",
    "weak_check": "agent/commands.py:check_command",
}
"""Where in the seed agent each evidence pattern arises; used only for a name the agent's map still has (of
several, the first it has: the seed asks for the edit in `NUDGE`, an agent without repairs.py in `solve`)."""


def responsible(agent: AgentMap, kind: str) -> str | None:
    """The target of the agent's map where a pattern of `kind` arises (RESPONSIBLE); None where it has none."""
    names = RESPONSIBLE.get(kind, ())
    return next(filter(None, map(agent.resolve, (names,) if isinstance(names, str) else names)), None)


DECIDING = {
    "reply_cut": r"\bmax_tokens\b",
    "context_cut": r"\bcontext_chars\b",
    "silent_failure": r"\bstd(?:out|err)\b",
    "timeout": r"\btimeout\b",
    "steps_exhausted": r"\bmax_steps\b",
    "unseen_file": r"\bbudget\b|\bread_text\(",
    "no_check": r"\bcheck\b|\.run\(",
    "weak_check": r"compileall|doctest|>>>",
    "unparsable_reply": r"\bin \(",
}
"""The names on the lines that decide each pattern in the seed (a reply is cut at `max_tokens`): shown
with computed instructions, so a model that transcribes a concrete change well but designs one
badly (the 1.5B: 10 of 10 placed a change it was told, 0 of 30 found one itself) sees the very line."""
LINES_HEADER = "The lines that decide it ({file}, lines {numbers}):"
"""The seed's improve looks for its first words (it then asks for those lines only)."""
MAX_DECIDING = 4
_OPENING_WORD = re.compile(r"^a ```([\w+-]+) block ")
"""The word opening the replies of an `unparsable_reply` pattern (its label, evolve.meta.evidence)."""
QUOTES = ("\"\"\"", "'''")
"""A docstring's first line names things too; it decides nothing."""


def deciding_lines(code: Path, instructions: Instructions) -> Instructions:
    """`instructions` with the lines of its target (else of the target's file) that decide its pattern
    (DECIDING; a constant of a few lines is decided by its own lines, whatever the pattern), at most
    MAX_DECIDING, their numbers in the parent's file in the header, and what the target's code shows
    (`code_notes`); unchanged where neither applies. Shown a one-line constant and the map, the 1.5B model
    rewrote the whole file the map listed for it (nudge-dropped, 3 of 3 candidates); asked for the lines
    only, a reply is those lines."""
    found = agent_map(code).symbol(instructions.target)
    if found is None:
        return instructions
    file, symbol = found
    lines = (code / file.path).read_text("utf-8", "replace").splitlines()
    word = _OPENING_WORD.search(instructions.problem) if instructions.kind == "unparsable_reply" else None
    notes = tuple(code_notes("\n".join(lines[symbol.start - 1: symbol.end]), symbol.start,
                             word[1].lower() if word else ""))
    instructions = replace(instructions, notes=notes) if notes else instructions
    pattern = DECIDING.get(instructions.kind)
    short_constant = symbol.kind == "constant" and symbol.end - symbol.start < MAX_DECIDING
    if pattern is None and not short_constant:
        return instructions
    numbered = list(enumerate(lines, 1))
    own = numbered[symbol.start - 1: symbol.end]
    for scope in (own, numbered) if pattern else (own,):  # a short constant: its own lines, all of them
        hits = [(number, line) for number, line in scope
                if (not pattern or re.search(pattern, line)) and not line.lstrip().startswith(("#", *QUOTES))
                ][:MAX_DECIDING]
        if hits:  # unnumbered: a model copies a "22: " prefix into its reply
            header = LINES_HEADER.format(file=file.path, numbers=", ".join(str(number) for number, _ in hits))
            return replace(instructions, lines="\n".join([header, *(line for _, line in hits)]))
    return instructions


def from_evidence(evidence: Evidence, agent: AgentMap) -> Instructions | None:
    """Instructions computed from the widest pattern whose responsible part (RESPONSIBLE) is in the map,
    causes before SYMPTOMS (a cut reply also leaves no edit), for when the model gives no usable reply
    (the 0.5B model echoed "The agent changed no file." in every reply of 3 trials of 3) or the run
    prefers the evidence (`[meta] diagnosis = "evidence"`); None when no pattern points into the map."""
    for pattern in sorted(evidence.patterns, key=lambda p: p.kind in SYMPTOMS):
        target = responsible(agent, pattern.kind)
        if target is None:
            continue
        passed = f" ({len(pattern.passed)} of them passed)" if pattern.passed else ""
        seen = f"{pattern.label}: {pattern.count} times in {len(pattern.tasks)} of {evidence.evaluations} tasks{passed}"
        example = f" (e.g. {pattern.excerpt})" if pattern.excerpt else ""
        fix = f" Usual fix: {REMEDIES[pattern.kind]}." if pattern.kind in REMEDIES else ""
        return Instructions(seen, "computed from the recorded conversations; the diagnosis model gave no usable reply",
                            f"Change {target} so that this no longer happens: {seen}{example}.{fix}",
                            (target.partition(":")[0],), target, source="evidence", kind=pattern.kind)
    return None


def diagnose(complete: Complete, problem: Problem, agent: AgentMap | Sequence[str], *,
             evidence: Evidence | None = None, attempts: int = 3, evidence_first: bool = False) -> Instructions:
    """Ask for instructions; a malformed reply, or one whose target is not in the agent's map, is answered
    with what was wrong and asked again (at most `attempts` replies); then the instructions computed from
    the evidence (`from_evidence`), else refused (DiagnosisFailed). `evidence_first`: the computed
    instructions, where there are any, without asking the model."""
    messages = prompt(problem, agent, evidence)
    mapped = agent if isinstance(agent, AgentMap) else None
    if evidence_first and evidence is not None and mapped is not None:
        computed = from_evidence(evidence, mapped)
        if computed is not None:
            return replace(computed, cause="computed from the recorded conversations", evidence=_widest(evidence))
    errors = []
    for attempt in range(attempts):
        reply = complete(messages, temperature=RETRY_TEMPERATURE if attempt else None)
        try:
            echoes = [problem.summary, *(p.label for p in (evidence.patterns if evidence else ()))]
            found = parse_instructions(reply, mapped, problem.statement or "", echoes)
        except ValueError as exc:
            errors.append(str(exc))
            keys = ", ".join(FIELDS) if mapped else "problem, cause, change, files"
            messages = [*messages, {"role": "assistant", "content": reply},
                        {"role": "user", "content": f"That reply is not usable: {exc}. Reply with only a JSON "
                         f"object with the keys {keys}."}]
            continue
        return replace(found, evidence=_widest(evidence))
    computed = from_evidence(evidence, mapped) if evidence is not None and mapped is not None else None
    if computed is not None:
        return replace(computed, evidence=_widest(evidence))
    raise DiagnosisFailed(f"no usable diagnosis after {attempts} replies: {'; '.join(errors)}")


def _widest(evidence: Evidence | None) -> str:
    return evidence.render(3).split("\n", 1)[1] if evidence is not None and evidence.patterns else ""
