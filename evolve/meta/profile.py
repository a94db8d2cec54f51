"""An agent's own profile: what the meta step may know about one agent, shipped by that agent as data.

The engine knows no agent's files, names or values (evolve.meta.locate finds where to change an agent from
its recorded data). What holds for one agent only, such as a description of its parts for a meta prompt that
describes the agent (DGM's "coding agent summary"), belongs to that agent: an optional `profile.toml` at the
root of its project, beside `agent/`, part of its code, so evolution can change it like the rest. It only
informs the meta step: no score, verdict or budget reads it.

    summary = \"\"\"
    - `agent/main.py` runs the loop; ...
    \"\"\"

    [markers]   # how this agent's own messages read, for the computed evidence (evolve.meta.evidence)
    check = "Tests: {command} ->"           # it shows the model its own check's result
    exit = "(exit {code})"                  # a command's exit status, as it shows it
    timed_out = "(killed after {seconds})"  # a command it stopped at its time limit
    edited = ["Saved {file}"]               # its edit tools' answers
    status = "done: {status}"               # its last line: submitted | limits | model_error

Each marker is a template: its text is matched literally, `{name}` stands for text on one line, and the
marker's own field (`{command}`, `{code}`, `{file}`, `{status}`) must appear once. The engine composes them
into patterns itself (the agent writes no regular expression the engine runs), so a marker cannot make the
meta step slow. Without markers the patterns that read them (a failing check, a silent failure, an edit's
file, the exit status from the agent's output) are not counted; the rest come from the gateway's records.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

PROFILE = "profile.toml"
MAX_PROFILE_BYTES = 64 << 10
SUMMARY_CHARS = 2000
"""The longest summary a meta prompt shows (agent-written text)."""


MARKER_CHARS = 200
"""The longest marker template read."""
FIELDS = {"check": "command", "exit": "code", "timed_out": "seconds", "edited": "file", "status": "status"}
"""Each marker and the field it must hold once (the part of the agent's message the evidence reads)."""
MAX_EDITED = 8
"""The most edit-tool answers an agent may declare."""
BETWEEN_CHARS = 50_000
"""The most text between the check's marker and its exit status that still counts as its result."""
_OTHER = r"[^\n]{0,80}?"
"""Any other `{name}` of a template: up to 80 characters of one line."""
_FIELD_PATTERNS = {
    "command": r"[^\n]{0,400}?",
    "code": r"\d+",
    "seconds": _OTHER,
    "status": r"\w+",
    "file": r"\S+?",
}
"""What each field matches."""
_FILE_END = r"(?: \(|\.?\s|\.?$)"
"""Where a file name ends: a space, a line's end or " (", a closing period left out."""
_GAP = f".{{0,{BETWEEN_CHARS}}}?"
_PLACEHOLDER = re.compile(r"\{(\w+)\}")


@dataclass(frozen=True)
class Markers:
    """How one agent's own messages read, as patterns the engine composed from the agent's templates; a
    marker the agent does not declare is None (or empty), and the evidence that reads it is not counted."""

    check: re.Pattern[str] | None = None
    """The agent's check and its result: groups `command`, `code` (None where the check timed out)."""
    checked: re.Pattern[str] | None = None
    """The agent's check and its exit code only: groups `command`, `code`."""
    silent: re.Pattern[str] | None = None
    """An output that is an exit status alone, or the check's marker then an exit status: group `code`."""
    timed_out: re.Pattern[str] | None = None
    edited: tuple[re.Pattern[str], ...] = ()
    """An edit tool's answers, each at a line's start: group `file`."""
    status: re.Pattern[str] | None = None
    """The agent's exit status line: group `status`."""

    @classmethod
    def of(cls, table: object) -> Markers:
        """Markers from a profile's `[markers]` table; ValueError (one line) naming a bad marker."""
        if not isinstance(table, dict):
            raise ValueError("markers must be a table")  # noqa: TRY004 (one error type: a bad profile)
        unknown = sorted(set(table) - set(FIELDS))
        if unknown:
            raise ValueError(f"unknown marker {unknown[0]!r} (known: {', '.join(FIELDS)})")
        one = {name: _compose(name, value) for name, value in table.items() if name != "edited"}
        edited = table.get("edited", [])
        if not isinstance(edited, list):
            edited = [edited]
        if len(edited) > MAX_EDITED:
            raise ValueError(f"marker 'edited' holds more than {MAX_EDITED} templates")
        exit, check, timed_out = one.get("exit"), one.get("check"), one.get("timed_out")
        ended = None if exit is None else f"(?:{exit}|{timed_out})" if timed_out else exit
        return cls(
            check=None if check is None or ended is None else re.compile(f"{check}{_GAP}{ended}", re.DOTALL),
            checked=None if check is None or exit is None else re.compile(f"{check}{_GAP}{exit}", re.DOTALL),
            silent=None
            if exit is None
            else re.compile(f"(?:\\A|{check}\\n){exit}\\Z" if check else f"\\A{exit}\\Z"),
            timed_out=None if timed_out is None else re.compile(timed_out),
            edited=tuple(re.compile(f"^{_compose('edited', e)}", re.MULTILINE) for e in edited),
            status=None if "status" not in one else re.compile(one["status"]),
        )


def marked(patterns: re.Pattern[str] | Sequence[re.Pattern[str]] | None, text: str, group: str) -> list[str]:
    """Every `group` of the marker `patterns` in `text`, in order of pattern (none for an undeclared one)."""
    if patterns is None:
        return []
    if isinstance(patterns, re.Pattern):
        patterns = (patterns,)
    return [m[group] or "" for pattern in patterns for m in pattern.finditer(text)]


def _compose(name: str, template: object) -> str:
    """A regular expression for one marker template: its text literal, its own field a named group, any
    other `{name}` a bounded stretch of one line. A template opens with text and puts text between its
    fields, so every pattern the engine runs anchors on literal text and stays linear in what it reads."""
    if not isinstance(template, str) or not template.strip() or len(template) > MARKER_CHARS:
        raise ValueError(f"marker {name!r} must be a non-empty string of at most {MARKER_CHARS} characters")
    own, fields = FIELDS[name], _PLACEHOLDER.findall(template)
    if fields.count(own) != 1:
        raise ValueError(f"marker {name!r} must hold {{{own}}} once: {template!r}")
    if len(fields) > 3 or len(template.split("{", 1)[0].strip()) < 2 or re.search(r"\}\s*\{", template):
        raise ValueError(
            f"marker {name!r} must open with text, put text between its fields and hold at most 3: "
            f"{template!r}"
        )
    pieces, at = [], 0
    for match in _PLACEHOLDER.finditer(template):
        pieces.append(re.escape(template[at : match.start()]))
        if match[1] != own:
            pieces.append(_OTHER)
        else:
            pieces.append(f"(?P<{own}>{_FIELD_PATTERNS[own]})" + (_FILE_END if own == "file" else ""))
        at = match.end()
    pieces.append(re.escape(template[at:]))
    return "".join(pieces)


@dataclass(frozen=True)
class Profile:
    summary: str = ""
    """Lines describing the agent's parts, in its own words ("" when it ships none)."""
    problem: str = ""
    """Why the profile could not be read, in one line ("" when it was read or there is none)."""
    markers: Markers = field(default_factory=Markers)


def agent_profile(code: Path) -> Profile:
    """The profile the agent rooted at `code` ships, else an empty one (with the reason when unreadable)."""
    path = code / PROFILE
    if not path.is_file() or path.is_symlink():
        return Profile()
    if path.stat().st_size > MAX_PROFILE_BYTES:
        return Profile(problem=f"{PROFILE}: larger than {MAX_PROFILE_BYTES} bytes")
    try:
        data = tomllib.loads(path.read_text("utf-8", "replace"))
    except tomllib.TOMLDecodeError as exc:
        return Profile(problem=f"{PROFILE}: {exc}")
    except RecursionError:  # the agent's own file: arrays nested past the parser's recursion limit
        return Profile(problem=f"{PROFILE}: nested too deep to parse")
    summary = data.get("summary", "")
    if not isinstance(summary, str):
        return Profile(problem=f"{PROFILE}: summary must be a string")
    try:
        markers = Markers.of(data.get("markers", {}))
    except ValueError as exc:  # the agent's own data: the meta step goes on without its markers
        return Profile(problem=f"{PROFILE}: {exc}")
    summary = summary.strip()
    return Profile(
        summary if len(summary) <= SUMMARY_CHARS else summary[:SUMMARY_CHARS] + " [...]", "", markers
    )
