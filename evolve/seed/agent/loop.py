"""The step loop: ask the model, do one action, show the result; stop on done, solved, or the step cap."""

from __future__ import annotations

import ast
import json
import time
from dataclasses import dataclass, field
from pathlib import Path

from agent import lessons, prompts
from agent.actions import TOOL_SCHEMAS, Action, FormatError, parse_reply
from agent.context import RepoView, is_test, render_files, view_repo
from agent.model import Message, Model, ModelError, Reply
from agent.tools import ToolError, Workspace, cap


class Submitted(Exception):
    """The agent is finished (the model said done, or the checks went from failing to passing)."""


class LimitsExceeded(Exception):
    """The step cap is reached."""


class Stuck(Exception):
    """The model sent the same reply too many times in a row, even when sampled hotter."""


@dataclass(frozen=True)
class AgentConfig:
    max_steps: int = 20
    native_tools: bool = False  # OpenAI tool calls; otherwise the fenced-block text protocol
    keep_last: int = 8  # messages kept verbatim after the task; older ones are shortened
    trimmed_chars: int = 300  # what an old message is shortened to
    done_refusals: int = 2  # how often "done" without any edit is refused
    context_chars: int = 12000  # rough prompt budget (about 3.5k tokens; the embedded model has 4k)
    max_repeats: int = 2  # the same reply this many times in a row after the first: stop, it is stuck
    retry_temperature: float = 0.8  # after a repeated reply, sample hotter to get a different one


@dataclass
class Agent:
    model: Model
    workspace: Workspace
    config: AgentConfig
    transcript: Path | None = None
    messages: list[Message] = field(default_factory=list)
    steps: int = 0
    refusals: int = 0
    warned_failing: bool = False
    baseline_ok: bool = True
    baseline_stubs: int = 0
    last_error: str = ""
    repeats: int = 0

    def run(self, problem: str, template: str = prompts.SOLVE, view: RepoView | None = None) -> str:
        """Work on `problem`; returns the exit status: submitted | limits | stuck | model_error."""
        view = view or view_repo(self.workspace.root, problem)
        self.baseline_ok, baseline = self.check(view)
        self.baseline_stubs = self.stubs(view)
        system = prompts.SYSTEM_TOOLS if self.config.native_tools else prompts.SYSTEM_TEXT
        first = template.format(problem=problem.strip(), files=render_files(self.workspace.root, view),
                                check=view.check_command, baseline=baseline, lessons=render_lessons())
        self.add(Message("system", system))
        self.add(Message("user", first))
        try:
            while True:
                self.step(view)
        except Submitted:
            status = "submitted"
        except LimitsExceeded:
            status = "limits"
        except Stuck:
            status = "stuck"
        except ModelError as exc:
            self.log({"event": "model_error", "detail": str(exc)})
            self.last_error = str(exc)
            status = "model_error"
        self.log({"event": "exit", "status": status, "steps": self.steps, "edits": self.workspace.edits})
        return status

    def step(self, view: RepoView) -> None:
        if self.steps >= self.config.max_steps:
            raise LimitsExceeded()
        self.steps += 1
        reply = self.ask(TOOL_SCHEMAS if self.config.native_tools else None)
        repeated = any(m.role == "assistant" and m.content == reply.content and m.tool_calls == reply.tool_calls
                       for m in self.messages[-4:])
        self.add(Message("assistant", reply.content, reply.tool_calls))
        self.repeats = self.repeats + 1 if repeated else 0
        if self.repeats > self.config.max_repeats:
            self.log({"event": "stuck", "detail": f"the same reply {self.repeats + 1} times in a row"})
            raise Stuck()
        try:
            action = parse_reply(reply)
            if repeated and action.kind != "done":
                raise FormatError(prompts.REPEATED)
            observation = self.execute(action, view)
        except (FormatError, ToolError) as exc:
            action, observation = Action("error", call_id=_first_call(reply)), str(exc)
        self.observe(reply, action, observation)

    def ask(self, tools: list[dict] | None) -> Reply:
        """One model call; after a repeated reply, sampled at `retry_temperature` (models that have one)."""
        base = getattr(self.model, "temperature", None)
        if self.repeats and base is not None:
            self.model.temperature = max(base, self.config.retry_temperature)
        messages = self.trimmed()
        if self.repeats:
            messages = [*_without_repeats(messages, self.messages[-2]), Message("user", prompts.REPEATED)]
        try:
            return self.model.query(messages, tools)
        finally:
            if base is not None:
                self.model.temperature = base

    def execute(self, action: Action, view: RepoView) -> str:
        ws = self.workspace
        if action.kind == "done":
            return self.finish(view)
        if action.kind == "bash":
            return ws.bash(action.text)
        if action.kind == "view":
            return ws.view(action.path)
        if action.kind == "undo":
            return ws.undo(action.path)
        if action.kind == "write":
            result = ws.write(action.path, action.text)
        elif action.kind == "replace":
            result = ws.replace(action.path, action.old, action.new)
        else:
            others = [f for f in view.files if f.endswith(".py") and f not in view.shown and not is_test(f)]
            result = ws.merge_python(action.text, action.path, view.shown + others)
        ok, output = self.check(view)
        stubs = self.stubs(view)
        if ok and (not self.baseline_ok or (self.baseline_stubs and not stubs)):
            self.log({"event": "solved", "detail": "checks pass after the edit" + ("" if self.baseline_ok else
                      ", and failed before") + (", no stub left" if self.baseline_stubs else "")})
            raise Submitted()
        left = self.stub_names(view) if stubs else []
        if not ok:
            hint = ""
        elif left:
            hint = prompts.STUBS_LEFT.format(names=", ".join(left))
        else:  # checks that passed before the edit too say nothing about the task
            hint = prompts.CHECKS_PASS if not self.baseline_ok else prompts.CHECKS_PASSED_BEFORE
        return prompts.EDIT_RESULT.format(result=result, check=view.check_command, output=output) + hint

    def finish(self, view: RepoView) -> str:
        if self.workspace.edits == 0 and self.refusals < self.config.done_refusals:
            self.refusals += 1
            return prompts.NO_EDIT_YET
        left = self.stub_names(view) if self.baseline_stubs else []
        if left and self.refusals < self.config.done_refusals:
            self.refusals += 1
            return prompts.STUBS_LEFT.format(names=", ".join(left))
        ok, output = self.check(view)
        if not ok and not self.warned_failing:
            self.warned_failing = True
            return prompts.CHECKS_FAIL.format(output=output)
        raise Submitted()

    def stubs(self, view: RepoView) -> int:
        """`raise NotImplementedError` lines in the shown files: a stub to implement is a task's own check."""
        root = self.workspace.root
        return sum((root / f).read_text(errors="replace").count("raise NotImplementedError")
                   for f in view.shown if (root / f).is_file())

    def stub_names(self, view: RepoView) -> list[str]:
        """`file: function` for each function of the shown files whose body still raises NotImplementedError."""
        root = self.workspace.root
        return [f"{name}: {func}" for name in view.shown if (root / name).is_file()
                for func in stub_functions((root / name).read_text(errors="replace"))]

    def check(self, view: RepoView) -> tuple[bool, str]:
        output = self.workspace.bash(view.check_command, timeout=120)
        return output.rstrip().endswith("[exit code 0]"), cap(output, 1500)

    def observe(self, reply: Reply, action: Action, observation: str) -> None:
        if reply.tool_calls:
            for i, call in enumerate(reply.tool_calls):
                text = observation if i == 0 else "Ignored: one tool call per step."
                self.add(Message("tool", text, tool_call_id=call.id))
        else:
            self.add(Message("user", observation))

    def trimmed(self) -> list[Message]:
        """System + task verbatim, the last few messages verbatim, older ones shortened; then, while the
        whole is over `context_chars`, the oldest exchanges are dropped (small models have small windows)."""
        head, tail = self.messages[:2], self.messages[2:]
        cut = max(len(tail) - self.config.keep_last, 0)
        old = [_shorten(m, self.config.trimmed_chars) for m in tail[:cut]]
        kept = old + tail[cut:]
        size = lambda msgs: sum(len(m.content) for m in msgs)
        while len(kept) > 2 and size(head + kept) > self.config.context_chars:
            kept = kept[2:] if kept[0].role == "assistant" else kept[1:]  # drop whole exchanges
        if size(head + kept) > self.config.context_chars:
            room = max(self.config.context_chars - size(head), 2 * self.config.trimmed_chars)
            kept = [_shorten(m, room // max(len(kept), 1)) for m in kept]
        return head + kept

    def add(self, message: Message) -> None:
        self.messages.append(message)
        self.log({"role": message.role, "content": message.content,
                  "tool_calls": [c.__dict__ for c in message.tool_calls] or None})

    def log(self, record: dict) -> None:
        if self.transcript is None:
            return
        record = {"time": round(time.time(), 3), "step": self.steps, **record}
        with self.transcript.open("a") as handle:
            handle.write(json.dumps(record) + "\n")


def _without_repeats(messages: list[Message], repeated: Message) -> list[Message]:
    """The context with the copies of a repeated text reply (and the answers to them) left out: a small
    model copies the last thing it said, so the prompt ends with what the first one got back (and a
    note that it must do something else)."""
    kept: list[Message] = []
    seen = skip = False
    for message in messages:
        if skip:
            skip = False
            continue
        if message.role == "assistant" and not message.tool_calls and message.content == repeated.content:
            if seen:
                skip = True
                continue
            seen = True
        kept.append(message)
    return kept


def stub_functions(source: str) -> list[str]:
    """Functions (and methods, as Class.method) whose body raises NotImplementedError."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    found = []

    def visit(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, ast.ClassDef):
                visit(node.body, f"{prefix}{node.name}.")
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
                    isinstance(n, ast.Raise) and "NotImplementedError" in ast.unparse(n) for n in ast.walk(node)):
                found.append(prefix + node.name)

    visit(tree.body, "")
    return found


def render_lessons(learned: list[str] | None = None) -> str:
    learned = lessons.LESSONS if learned is None else learned
    if not learned:
        return ""
    return "\n" + prompts.LESSONS_HEADER + "\n" + "\n".join(f"- {line}" for line in learned) + "\n"


def _shorten(message: Message, limit: int) -> Message:
    if len(message.content) <= limit:
        return message
    return Message(message.role, message.content[:limit] + " [...]", message.tool_calls, message.tool_call_id)


def _first_call(reply: Reply) -> str | None:
    return reply.tool_calls[0].id if reply.tool_calls else None
