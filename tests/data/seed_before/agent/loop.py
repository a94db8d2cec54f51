"""The step loop: ask the model, do the one action its reply names, show the result; until done."""
import json
import re
import time
from pathlib import Path

from agent import prompts
from agent.model import Model, ModelError
from agent.tools import ToolError, Workspace, cap

try:
    from agent import repairs
except ImportError:
    repairs = None

FENCE = re.compile(r"^```[ \t]*(\w*)[ \t]*([^\n`]*)(?:\n|\Z)(.*?)(?:^```|```[ \t]*$|\Z)", re.DOTALL | re.MULTILINE)
SEARCH_REPLACE = re.compile(r"<{5,9} *SEARCH *\n(.*?)\n?={5,9} *\n(.*?)\n?>{5,9} *REPLACE", re.DOTALL)


def parse(text: str, editing: bool = False) -> tuple[str, dict]:
    """(action, arguments) from the first fenced block at a line's start (not "```done" in a sentence)."""
    block = FENCE.search(text)
    kind, info, body = (block[1].lower(), block[2].strip(), block[3]) if block else ("", "", "")
    edit = SEARCH_REPLACE.search(body)
    found = {"bash": ("bash", {"command": body}), "write": ("write", {"path": info, "content": body}),
             "replace": edit and ("replace", {"path": info, "old": edit[1], "new": edit[2]}), "done": ("done", {})}
    edited = editing and block and repairs and kind not in found and ("python", {"path": info, "code": body})
    if action := found.get(kind) or edited or (repairs and repairs.parse(text, block)):
        return action
    raise ToolError(prompts.FORMAT)


class Agent:
    def __init__(self, model: Model, workspace: Workspace, max_steps: int, transcript: Path | None = None,
                 context_chars: int = 26000) -> None:
        self.model, self.workspace, self.max_steps, self.transcript = model, workspace, max_steps, transcript
        self.context_chars, self.messages = context_chars, []
        self.steps, self.error, self.check, self.failing, self.editing = 0, "", "", False, False

    def run(self, task: str, check: str = "", system: str = prompts.SYSTEM) -> str:
        """submitted | limits | model_error. `check` runs after each edit; failing, then passing, ends it."""
        if check:
            output = self.workspace.bash(check, timeout=120)
            self.check, self.failing = check, not output.endswith("[exit code 0]")
            task += "\n\n" + prompts.CHECK.format(check=check, output=cap(output, 1500))
        self.add({"role": "system", "content": system + (repairs.HINT if repairs and system == prompts.SYSTEM else "")})
        self.add({"role": "user", "content": task + (repairs.NUDGE if repairs and system == prompts.SYSTEM else "")})
        status, self.editing = "limits", system == prompts.EDIT
        try:
            while self.steps < self.max_steps and status == "limits":
                self.steps += 1
                status = "submitted" if self.step() else status
        except ModelError as exc:
            status, self.error = "model_error", str(exc)
        self.log({"event": "exit", "status": status, "steps": self.steps, "edits": self.workspace.edits})
        return status

    def step(self) -> bool:  # one model call and one action; True when finished
        hot = {"temperature": 1.0} if self.editing and self.steps > 1 else {}  # improve's retry: at 0.2 it repeats
        reply = self.model.query(self.context(), stop=["\n```\n"], **hot)["content"] or ""  # stop as a block closes
        self.add({"role": "assistant", "content": reply})
        try:
            finished, output = self.act(*parse(reply, self.editing))
        except (ToolError, OSError) as exc:  # OSError: e.g. a directory as a path
            finished, output = False, f"{type(exc).__name__}: {exc}" if isinstance(exc, OSError) else str(exc)
        self.add({"role": "user", "content": output})
        return finished

    def act(self, name: str, args: dict) -> tuple[bool, str]:
        if name == "done" and repairs and (refusal := repairs.refuse_done(self)):
            return False, refusal
        if name in ("done", "bash"):
            return name == "done", self.workspace.bash(args["command"]) if name == "bash" else "Done."
        result = (self.workspace.write(args["path"], args["content"]) if name == "write" else
                  self.workspace.replace(args["path"], args["old"], args["new"]) if name == "replace" else
                  repairs.merge(self.workspace, args["path"], args["code"]))  # "python": an edit
        if not self.check:
            return False, result
        output = self.workspace.bash(self.check, timeout=120)
        checked = prompts.CHECK.format(check=self.check, output=cap(output, 1500))
        return self.failing and output.endswith("[exit code 0]"), f"{result}\n{checked}"

    def context(self) -> list[dict]:
        """The system message and the task, then the latest steps that fit in `context_chars`."""
        head, tail = self.messages[:2], self.messages[2:]
        while tail and sum(len(m["content"]) for m in head + tail) > self.context_chars:
            tail = tail[2:]  # the oldest step, whole
        return head + tail

    def add(self, message: dict) -> None:
        self.messages.append(message)
        self.log(message)

    def log(self, record: dict) -> None:
        with (self.transcript or Path("/dev/null")).open("a") as handle:
            handle.write(json.dumps({"time": round(time.time(), 3), "step": self.steps, **record}) + "\n")
