"""An agent's own profile: what the meta step may know about one agent, shipped by that agent as data.

The engine knows no agent's files, names or values (evolve.meta.locate finds where to change an agent from
its recorded data). What holds for one agent only, such as a description of its parts for a meta prompt that
describes the agent (DGM's "coding agent summary"), belongs to that agent: an optional `profile.toml` at the
root of its project, beside `agent/`, part of its code, so evolution can change it like the rest. It only
informs meta prompts: no score, verdict or budget reads it.

    summary = \"\"\"
    - `agent/main.py` runs the loop; ...
    \"\"\"
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

PROFILE = "profile.toml"
MAX_PROFILE_BYTES = 64 << 10
SUMMARY_CHARS = 2000
"""The longest summary a meta prompt shows (agent-written text)."""


@dataclass(frozen=True)
class Profile:
    summary: str = ""
    """Lines describing the agent's parts, in its own words ("" when it ships none)."""
    problem: str = ""
    """Why the profile could not be read, in one line ("" when it was read or there is none)."""


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
    summary = summary.strip()
    return Profile(summary if len(summary) <= SUMMARY_CHARS else summary[:SUMMARY_CHARS] + " [...]")
