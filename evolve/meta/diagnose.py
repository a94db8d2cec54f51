"""Diagnose a problem into structured improvement instructions with the `diagnose` model."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from evolve.errors import EvolveError
from evolve.meta.agentmap import AgentMap
from evolve.meta.evidence import SYMPTOMS, Evidence, one_line
from evolve.meta.locations import Location
from evolve.meta.problems import Problem
from evolve.untrusted import Refused, parse_json, read_text

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
_CHANGE_LINE = re.compile(r"^Change to make: (.+)$", re.MULTILINE)
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
    """One name of the agent's map (`FILE:NAME`, or a file of it), canonical."""
    evidence: str = ""
    """The computed evidence's lines that the change answers (the head of `Evidence.render`)."""
    source: str = "model"
    """model (the diagnosis model's reply) | evidence (no usable reply: `from_evidence`)."""
    kind: str = ""
    """The widest evidence pattern when the instructions were computed (`Pattern.kind`), for the record."""
    lines: str = ""
    """The lines of the top-ranked location's file that the data points at, under LINES_HEADER naming the file
    and their numbers (computed instructions only)."""
    locations: tuple[Location, ...] = ()
    """The ranked locations the diagnosis was given (evolve.meta.locate), most suspicious first."""

    def render(self) -> str:
        """The instructions file handed to `python -m agent improve` (its `Target:` line: `target_of`)."""
        files = "\n".join(f"- {name}" for name in self.files) or "- (the agent decides)"
        target = f"Target: {self.target}\n\n" if self.target else ""
        lines = f"{self.lines}\n\n" if self.lines else ""
        evidence = f"\n\nWhat went wrong, counted:\n{self.evidence}" if self.evidence else ""
        return (
            f"Problem: {self.problem}\n\nLikely cause: {self.cause}\n\n{target}Change to make: "
            f"{self.change}\n\n"
            f"{lines}Files to look at:\n{files}{evidence}\n"
        )

    def to_json(self) -> dict:
        return {
            "target": self.target,
            "change": self.change,
            "problem": self.problem,
            "cause": self.cause,
            "files": list(self.files),
            "source": self.source,
            "kind": self.kind,
            "lines": self.lines,
            "locations": [location.to_json() for location in self.locations],
        }


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
    schema = {
        "type": "object",
        "properties": {"target": target, **texts},
        "required": list(FIELDS),
        "additionalProperties": False,
    }
    return {"type": "json_schema", "json_schema": {"name": "diagnosis", "strict": True, "schema": schema}}


def target_of(instructions: str) -> str | None:
    """The target named by rendered instructions (their `Target: FILE:NAME` line), or None."""
    match = _TARGET_LINE.search(instructions)
    return match[1] if match else None


NAME_CHARS = 60
"""An edit's short name (`edit_name`) is cut to this many characters."""


def edit_name(instructions: str) -> str:
    """A short name of the edit that rendered instructions asked for: its target and its change (`render`'s
    lines), else the first line of free text (an imported run's); for `evolve status` and the report."""
    change = _CHANGE_LINE.search(instructions)
    target = target_of(instructions)
    if change is not None:
        name = f"{target}: {change[1].strip()}" if target else change[1].strip()
    else:
        name = next((line.strip() for line in instructions.splitlines() if line.strip()), "(no instructions)")
    return name if len(name) <= NAME_CHARS else name[: NAME_CHARS - 3] + "..."


def prompt(
    problem: Problem,
    agent: AgentMap | Sequence[str],
    evidence: Evidence | None = None,
    locations: Sequence[Location] = (),
    code: Path | None = None,
) -> list[dict]:
    """The diagnosis request: the computed evidence, where the data points in the agent's code (the ranked
    locations, evolve.meta.locate), one failure in detail, the agent's map (short, because small models read
    slowly; golden-tested). A list of file names stands in for a map."""
    parts = []
    if evidence is not None:
        parts.append(
            f"What went wrong, counted from the agent's transcripts:\n{evidence.render(EVIDENCE_PATTERNS)}"
        )
    if isinstance(agent, AgentMap) and locations:
        parts.append(
            "Where the recorded data points in this agent's code, most suspicious first:\n"
            + render_locations(locations, agent, code)
        )
    parts.append(f"One failure in detail: {problem.summary}")
    if problem.statement:
        parts.append(f"The task it was given:\n{problem.statement[:1000]}")
    if problem.transcript_tail:
        parts.append(f"The end of what the agent saw and did:\n{problem.transcript_tail}")
    if problem.agent_output:
        parts.append(f"The agent's own output:\n{problem.agent_output}")
    if isinstance(agent, AgentMap):
        parts.append(
            f"The map of the agent's code (name the target as listed):\n"
            f"{agent.render(summaries=False, qualified=True)}"
        )
    else:
        parts.append(f"The agent's files: {', '.join(agent)}")
    parts.append("Reply with the JSON object only.")
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "\n\n".join(parts)}]


def reply_object(reply: str) -> dict:
    """The JSON object in a model's reply (a fenced block, else the outermost braces); ValueError if none."""
    match = _FENCE.search(reply) or _OBJECT.search(reply)
    if match is None:
        raise ValueError("the reply holds no JSON object")
    data = parse_json(match.group(1) if match.re is _FENCE else match.group(0))  # bounded, never raises
    if isinstance(data, Refused):
        raise ValueError(f"the JSON does not parse: {data.reason}")  # noqa: TRY004 - a bad reply, as below
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


def parse_instructions(
    reply: str, agent: AgentMap | None = None, task_text: str = "", echoes: Sequence[str] = ()
) -> Instructions:
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
    text = {
        key: value if isinstance(value := data.get(key), str) else ""
        for key in ("problem", "cause", "target")
    }
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
    # a file counts too, unless it defines nothing while other files do (small models name __init__.py)
    scripts = not any(f.symbols for f in agent.files)
    found = agent.resolve(written) or next(
        (f.path for f in agent.files if (f.symbols or scripts) and f.path == written.strip(" `'\"")), None
    )
    if found is None:
        raise ValueError(
            f'"target" {written[:80]!r} is not part of the agent (task code, or not in the map); '
            "name one function, class, method or constant from the map, as it lists it"
        )
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
        raise ValueError(
            f"the change is about the task's own code ({', '.join(named)}), not the agent's: "
            "say what to change in the agent so that it solves such tasks"
        )


LINES_HEADER = "The lines that decide it ({file}, lines {numbers}):"
"""The header of the lines computed instructions show (an agent's improve may look for its first words and
then ask for those lines only)."""
MAX_DECIDING = 4
"""Lines shown under LINES_HEADER: the top-ranked location's and others of the same file ranked below it."""
LOCATIONS_SHOWN = 6
"""Ranked locations the diagnosis model is shown (with their evidence and their line of code)."""


def _symbol_at(agent: AgentMap, path: str, line: int) -> str | None:
    """The target of the map whose lines hold `line` of `path` (a method before its class), or None."""
    for file in agent.files:
        if file.path == path:
            inside = [s for s in file.symbols if s.start <= line <= s.end]
            if inside:
                return f"{path}:{min(inside, key=lambda s: s.end - s.start).name}"
    return None


def _line_of(code: Path | None, path: str, line: int) -> str:
    if code is None or not (code / path).is_file():
        return ""
    lines = read_text(code / path).splitlines()  # the agent's file: no regular file reads as empty
    return lines[line - 1] if line <= len(lines) else ""


def render_locations(
    locations: Sequence[Location], agent: AgentMap, code: Path | None, limit: int = LOCATIONS_SHOWN
) -> str:
    """The ranked locations as a prompt shows them: `N. FILE line L (in TARGET), score S: evidence`, then
    the line of code (agent text on one quoted line)."""
    out = []
    for number, location in enumerate(locations[:limit], 1):
        target = _symbol_at(agent, location.path, location.line)
        inside = f" (in {target.partition(':')[2]})" if target else ""
        out.append(
            f"{number}. {location.path} line {location.line}{inside}, score {location.score:.2f}: "
            f"{location.evidence}"
        )
        if text := _line_of(code, location.path, location.line).strip():
            out.append(f"   {one_line(text, 200)}")
    return "\n".join(out)


def _deciding(code: Path | None, top: Location, locations: Sequence[Location]) -> str:
    """The top location's line and those of lower-ranked locations in its file (at most MAX_DECIDING, in file
    order) under LINES_HEADER; "" when the code is not at hand."""
    below = [loc.line for loc in locations if loc.path == top.path and loc.line != top.line]  # in rank order
    numbers = sorted({top.line, *list(dict.fromkeys(below))[: MAX_DECIDING - 1]})
    shown = [(n, _line_of(code, top.path, n)) for n in numbers]
    shown = [(n, text) for n, text in shown if text.strip()]
    if not shown:
        return ""
    header = LINES_HEADER.format(file=top.path, numbers=", ".join(str(n) for n, _ in shown))
    return "\n".join([header, *(text for _, text in shown)])  # unnumbered: a model copies a "22: " prefix


def from_evidence(
    evidence: Evidence, agent: AgentMap, locations: Sequence[Location] = (), code: Path | None = None
) -> Instructions | None:
    """Instructions computed from the data, for when the model gives no usable reply (a small model may echo
    the problem back in every reply) or the run prefers them (`[meta] diagnosis
    = "evidence"`): the top-ranked location (evolve.meta.locate) in the agent's map is the target, its
    evidence the problem, its line (with the lines of others ranked in its file) the lines shown; the widest
    pattern of the evidence says what went wrong overall. None when no location lies in the map."""
    files = {file.path for file in agent.files}
    ranked = [loc for loc in locations if loc.path in files]
    if not ranked:
        return None
    top = ranked[0]
    target = _symbol_at(agent, top.path, top.line) or top.path
    widest = min(evidence.patterns, key=lambda p: p.kind in SYMPTOMS, default=None)  # causes before symptoms
    seen = (
        f" Overall, {widest.label}: {widest.count} times in {len(widest.tasks)} of "
        f"{evidence.evaluations} tasks."
        if widest is not None
        else ""
    )
    inside = target.partition(":")[2] or "the file"
    return Instructions(
        f"{top.evidence}.{seen}",
        f"computed from the recorded exchanges: they point at line {top.line} of {top.path}",
        f"Change line {top.line} of {top.path} (in {inside}) so that this no longer happens: {top.evidence}.",
        (top.path,),
        target,
        source="evidence",
        kind=widest.kind if widest else "",
        lines=_deciding(code, top, ranked),
        locations=tuple(locations),
    )


def diagnose(
    complete: Complete,
    problem: Problem,
    agent: AgentMap | Sequence[str],
    *,
    evidence: Evidence | None = None,
    attempts: int = 3,
    evidence_first: bool = False,
    locations: Sequence[Location] = (),
    code: Path | None = None,
) -> Instructions:
    """Ask for instructions, showing the ranked `locations` (evolve.meta.locate; their lines read from `code`,
    the agent's root); a malformed reply, or one whose target is not in the agent's map, is answered with
    what was wrong and asked again (at most `attempts` replies); then the instructions computed from the
    data (`from_evidence`), else refused (DiagnosisFailed). `evidence_first`: the computed instructions,
    where there are any, without asking the model. Every result carries the ranked locations."""
    mapped = agent if isinstance(agent, AgentMap) else None
    messages = prompt(problem, agent, evidence, locations, code)
    computed = (
        from_evidence(evidence or Evidence(0, 0), mapped, locations, code) if mapped is not None else None
    )
    if evidence_first and computed is not None:
        return replace(computed, cause="computed from the recorded exchanges", evidence=_widest(evidence))
    errors = []
    for attempt in range(attempts):
        reply = complete(messages, temperature=RETRY_TEMPERATURE if attempt else None)
        try:
            echoes = [problem.summary, *(p.label for p in (evidence.patterns if evidence else ()))]
            found = parse_instructions(reply, mapped, problem.statement or "", echoes)
        except ValueError as exc:
            errors.append(str(exc))
            keys = ", ".join(FIELDS) if mapped else "problem, cause, change, files"
            messages = [
                *messages,
                {"role": "assistant", "content": reply},
                {
                    "role": "user",
                    "content": f"That reply is not usable: {exc}. Reply with only a JSON "
                    f"object with the keys {keys}.",
                },
            ]
            continue
        return replace(found, evidence=_widest(evidence), locations=tuple(locations))
    if computed is not None:
        return replace(computed, evidence=_widest(evidence))
    raise DiagnosisFailed(f"no usable diagnosis after {attempts} replies: {'; '.join(errors)}")


def _widest(evidence: Evidence | None) -> str:
    return evidence.render(3).split("\n", 1)[1] if evidence is not None and evidence.patterns else ""
