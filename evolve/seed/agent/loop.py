"""The step loop: ask the model, do the one action its reply names, show the result; until done."""
import json
import re
import time
from pathlib import Path

from agent import prompts
from agent.model import Model, ModelError
from agent.tools import CHECK_TIMEOUT, ToolError, Workspace, cap, passed

try:
    from agent import repairs
except ImportError:  # the agent works without its repairs
    repairs = None

FENCE = re.compile(r"^```[ \t]*(\w*)[ \t]*([^\n`]*)(?:\n|\Z)(.*?)(?:^```|```[ \t]*$|\Z)",
                   re.DOTALL | re.MULTILINE)
SEARCH_REPLACE = re.compile(r"<{5,9} *SEARCH *\n(.*?)\n?={5,9} *\n(.*?)\n?>{5,9} *REPLACE", re.DOTALL)
CHECK_OUTPUT = 1500  # characters of the checks' output shown


def parse(text: str, editing: bool = False) -> tuple[str, dict]:
    """(action, arguments) from the first fenced block at a line's start (not "```done" in a sentence)."""
    block = FENCE.search(text)
    action = None
    if block:
        action = block_action(block, editing)
    if action is None and repairs:
        action = repairs.parse(text, block)
    if action is None:
        raise ToolError(prompts.FORMAT)
    return action


def block_action(block: re.Match, editing: bool) -> tuple[str, dict] | None:
    """The action a block names. In improve a block of any other kind is code, read here: so a broken
    `repairs.parse` can be repaired."""
    kind = block[1].lower()
    path = block[2].strip()
    body = block[3]
    if kind == "bash":
        return "bash", {"command": body}
    if kind == "write":
        return "write", {"path": path, "content": body}
    if kind == "replace":
        edit = SEARCH_REPLACE.search(body)
        if edit:
            return "replace", {"path": path, "old": edit[1], "new": edit[2]}
        return None
    if kind == "done":
        return "done", {}
    if editing and repairs:
        return "python", {"path": path, "code": body}
    return None


class Agent:
    """One task: a conversation with the model, one action a step."""

    def __init__(self, model: Model, workspace: Workspace, max_steps: int, transcript: Path | None = None,
                 context_chars: int = 26000) -> None:
        self.model = model
        self.workspace = workspace
        self.max_steps = max_steps
        self.transcript = transcript
        self.context_chars = context_chars
        self.messages = []
        self.steps = 0
        self.error = ""
        self.check = ""  # run after each edit
        self.failing = False  # the check failed at the start: its passing ends the task
        self.editing = False  # improve: the agent edits its own code

    def run(self, task: str, check: str = "", system: str = prompts.SYSTEM) -> str:
        """submitted | limits | model_error. `check` runs after each edit; failing, then passing, ends it."""
        if check:
            output = self.workspace.bash(check, timeout=CHECK_TIMEOUT)
            self.check = check
            self.failing = not passed(output)
            task += "\n\n" + prompts.CHECK.format(check=check, output=cap(output, CHECK_OUTPUT))
        self.editing = system == prompts.EDIT
        if repairs and system == prompts.SYSTEM:
            system += prompts.HINT
            task += prompts.NUDGE
        self.add({"role": "system", "content": system})
        self.add({"role": "user", "content": task})
        status = "limits"
        try:
            while self.steps < self.max_steps and status == "limits":
                self.steps += 1
                if self.step():
                    status = "submitted"
        except ModelError as exc:
            status = "model_error"
            self.error = str(exc)
        self.log({"event": "exit", "status": status, "steps": self.steps, "edits": self.workspace.edits})
        return status

    def step(self) -> bool:
        """One model call and one action; True when finished."""
        options = {}
        if self.editing and self.steps > 1:
            options["temperature"] = 1.0  # improve's retry: at the engine's 0.2 it repeats its first reply
        message = self.model.query(self.context(), stop=["\n```\n"], **options)  # stop as a block closes
        reply = message["content"] or ""
        self.add({"role": "assistant", "content": reply})
        try:
            name, arguments = parse(reply, self.editing)
            finished, output = self.act(name, arguments)
        except ToolError as exc:
            finished = False
            output = str(exc)
        except OSError as exc:  # e.g. a directory given as a file
            finished = False
            output = f"{type(exc).__name__}: {exc}"
        self.add({"role": "user", "content": output})
        return finished

    def act(self, name: str, arguments: dict) -> tuple[bool, str]:
        """(finished, what the model is shown)."""
        if name == "done" and repairs:
            refusal = repairs.refuse_done(self)
            if refusal:
                return False, refusal
        if name == "done":
            return True, "Done."
        if name == "bash":
            return False, self.workspace.bash(arguments["command"])
        result = self.edit(name, arguments)
        if not self.check:
            return False, result
        output = self.workspace.bash(self.check, timeout=CHECK_TIMEOUT)
        checked = prompts.CHECK.format(check=self.check, output=cap(output, CHECK_OUTPUT))
        return self.failing and passed(output), f"{result}\n{checked}"

    def edit(self, name: str, arguments: dict) -> str:
        if name == "write":
            return self.workspace.write(arguments["path"], arguments["content"])
        if name == "replace":
            return self.workspace.replace(arguments["path"], arguments["old"], arguments["new"])
        return repairs.merge(self.workspace, arguments["path"], arguments["code"])  # "python"

    def context(self) -> list[dict]:
        """The system message and the task, then the latest steps that fit in `context_chars`."""
        head = self.messages[:2]
        tail = self.messages[2:]
        while tail and sum(len(m["content"]) for m in head + tail) > self.context_chars:
            tail = tail[2:]  # the oldest step, whole
        return head + tail

    def add(self, message: dict) -> None:
        self.messages.append(message)
        self.log(message)

    def log(self, record: dict) -> None:
        if self.transcript is None:
            return
        with self.transcript.open("a") as handle:
            handle.write(json.dumps({"time": round(time.time(), 3), "step": self.steps, **record}) + "\n")
