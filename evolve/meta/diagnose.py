"""Diagnose a problem into structured improvement instructions with the `diagnose` model."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from evolve.errors import EvolveError
from evolve.meta.problems import Problem

SYSTEM = (
    "You improve a coding agent (a small Python program that drives a language model). Read how it "
    "failed and say what to change in the agent's own code. Reply with one JSON object in a ```json "
    'block: {"problem": "...", "cause": "...", "change": "...", "files": ["agent/..."]}'
)
FIELDS = ("problem", "cause", "change", "files")
_FENCE = re.compile(r"```(?:json)?\s*(\{.*?\})\s*```", re.DOTALL)
_OBJECT = re.compile(r"\{.*\}", re.DOTALL)

Complete = Callable[..., str]
"""`complete(messages, temperature=None)`: messages (OpenAI style) in, the reply text out; a temperature
of None is the role's configured one."""

RETRY_TEMPERATURE = 0.8
"""A retry is sampled hotter: a small model asked again at a low temperature repeats its reply."""


class DiagnosisFailed(EvolveError):
    """The model gave no usable instructions after every retry."""


@dataclass(frozen=True)
class Instructions:
    """What the agent should change in itself, and why."""

    problem: str
    cause: str
    change: str
    files: tuple[str, ...] = ()

    def render(self) -> str:
        """The instructions file handed to `python -m agent improve`."""
        files = "\n".join(f"- {name}" for name in self.files) or "- (the agent decides)"
        return (f"Problem: {self.problem}\n\nLikely cause: {self.cause}\n\nChange to make: {self.change}\n\n"
                f"Files to look at:\n{files}\n")


def prompt(problem: Problem, agent_files: Sequence[str]) -> list[dict]:
    """The diagnosis request: short, because small models read slowly (golden-tested)."""
    parts = [f"The agent's files: {', '.join(agent_files)}", f"What went wrong: {problem.summary}"]
    if problem.statement:
        parts.append(f"The task it was given:\n{problem.statement[:1500]}")
    if problem.transcript_tail:
        parts.append(f"The end of what the agent saw and did:\n{problem.transcript_tail}")
    if problem.agent_output:
        parts.append(f"The agent's own output:\n{problem.agent_output}")
    parts.append("Reply with the JSON object only.")
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "\n\n".join(parts)}]


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


def parse_instructions(reply: str) -> Instructions:
    """The instructions in a reply; ValueError says what is wrong with them."""
    data = reply_object(reply)
    change = data.get("change")
    if not isinstance(change, str) or not change.strip():
        raise ValueError('"change" must be a non-empty string saying what to change')
    files = data.get("files") or []
    if isinstance(files, str):
        files = [files]
    if not isinstance(files, list) or not all(isinstance(f, str) for f in files):
        raise ValueError('"files" must be a list of file names')
    text = {key: value if isinstance(value := data.get(key), str) else "" for key in ("problem", "cause")}
    return Instructions(text["problem"].strip(), text["cause"].strip(), change.strip(), tuple(files))


def diagnose(complete: Complete, problem: Problem, agent_files: Sequence[str], *, attempts: int = 3) -> Instructions:
    """Ask for instructions; a malformed reply is answered with what was wrong and retried."""
    messages = prompt(problem, agent_files)
    errors = []
    for attempt in range(attempts):
        reply = complete(messages, temperature=RETRY_TEMPERATURE if attempt else None)
        try:
            return parse_instructions(reply)
        except ValueError as exc:
            errors.append(str(exc))
            messages = [*messages, {"role": "assistant", "content": reply},
                        {"role": "user", "content": f"That reply is not usable: {exc}. Reply with only "
                         'a JSON object with keys "problem", "cause", "change", "files".'}]
    raise DiagnosisFailed(f"no usable diagnosis after {attempts} replies: {'; '.join(errors)}")
