"""What the model asked for: one action per reply, from a fenced block (plain-text protocol) or a tool call.

Parsing is tolerant (missing closing fence, loose markers, a bare ```python block) and every
failure is a FormatError whose message tells the model what to write instead.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from agent.model import Reply, ToolCall


class FormatError(Exception):
    """The reply held no usable action; the message is shown to the model."""


@dataclass(frozen=True)
class Action:
    kind: str  # bash | view | write | replace | undo | python | done
    path: str = ""
    text: str = ""  # command, file content, or code
    old: str = ""
    new: str = ""
    call_id: str | None = None


FENCE = re.compile(r"```[ \t]*([A-Za-z_+-]*)[ \t]*([^\n`]*)\n(.*?)(?:```|\Z)", re.DOTALL)
SEARCH_REPLACE = re.compile(r"<{5,9}\s*SEARCH[^\n]*\n(.*?)\n?={5,9}[^\n]*\n(.*?)\n?>{5,9}\s*REPLACE", re.DOTALL)
BASH = {"bash", "sh", "shell", "console", "terminal"}
PYTHON = {"python", "py", "python3", ""}
FILE_COMMENT = re.compile(r"^#\s*(?:file:\s*)?([\w./-]+\.\w+)\s*$")

HELP = """Reply with one fenced block, for example:
```bash
python3 -m pytest -q
```
or ```write path/to/file.py (then the whole new file), or ```python path/to/file.py (then the complete
new function), or ```replace path/to/file.py with <<<<<<< SEARCH / ======= / >>>>>>> REPLACE, or ```done."""


def parse_reply(reply: Reply) -> Action:
    if reply.tool_calls:
        return parse_tool_call(reply.tool_calls[0])
    return parse_text(reply.content)


def parse_text(text: str) -> Action:
    blocks = FENCE.findall(text)
    if not blocks:
        if re.search(r"\b(DONE|done|TASK COMPLETE)\b", text[-200:]):
            return Action("done")
        raise FormatError("I found no fenced block in your reply. " + HELP)
    lang, info, body = blocks[0]
    lang, info = lang.lower(), info.strip()
    if lang in BASH:
        if not body.strip():
            raise FormatError("The bash block is empty. " + HELP)
        return Action("bash", text=body.strip())
    if lang in {"done", "submit", "finish"}:
        return Action("done")
    if lang in {"view", "cat", "open"}:
        return Action("view", path=(info or body.strip().splitlines()[0] if body.strip() else info))
    if lang in {"undo"}:
        return Action("undo", path=info or body.strip())
    if lang in {"write", "file", "create"}:
        if not info:
            raise FormatError("A write block needs the file path after the fence: ```write path/to/file.py")
        return Action("write", path=info, text=body)
    if lang in {"replace", "edit", "diff"}:
        return _replace(info, body)
    if lang in PYTHON:
        path = info
        lines = body.splitlines()
        if not path and lines and FILE_COMMENT.match(lines[0]):
            path = FILE_COMMENT.match(lines[0]).group(1)
        return Action("python", path=path, text=body)
    raise FormatError(f"I do not know the block type '{lang}'. " + HELP)


def _replace(path: str, body: str) -> Action:
    if not path:
        raise FormatError("A replace block needs the file path after the fence: ```replace path/to/file.py")
    match = SEARCH_REPLACE.search(body + "\n")
    if not match:
        raise FormatError("A replace block needs three marker lines: <<<<<<< SEARCH, =======, >>>>>>> REPLACE.")
    return Action("replace", path=path, old=match.group(1), new=match.group(2))


def parse_tool_call(call: ToolCall) -> Action:
    args = _loads(call.arguments)
    name = call.name.lower()
    get = lambda key: str(args.get(key, ""))
    if name == "bash":
        return Action("bash", text=get("command"), call_id=call.id)
    if name in {"view", "write_file", "replace", "undo"}:
        kind = {"write_file": "write"}.get(name, name)
        return Action(kind, path=get("path"), text=get("content"), old=get("old"), new=get("new"), call_id=call.id)
    if name in {"done", "submit"}:
        return Action("done", call_id=call.id)
    raise FormatError(f"Unknown tool '{call.name}'. Tools: bash, view, write_file, replace, undo, done.")


def _loads(arguments: str) -> dict:
    text = arguments.strip()
    if text.startswith("```"):
        text = text.strip("`").split("\n", 1)[-1]
    try:
        value = json.loads(text or "{}", strict=False)
    except json.JSONDecodeError as exc:
        raise FormatError(f"The tool arguments are not valid JSON ({exc.msg} at char {exc.pos}).") from exc
    if not isinstance(value, dict):
        raise FormatError("The tool arguments must be a JSON object.")
    return value


TOOL_SCHEMAS = [
    {"type": "function", "function": {"name": name, "description": desc, "parameters": {
        "type": "object", "properties": {p: {"type": "string"} for p in params}, "required": list(params)}}}
    for name, desc, params in [
        ("bash", "Run a shell command in the repository (timeout 60 s).", ("command",)),
        ("view", "Show a file with line numbers.", ("path",)),
        ("write_file", "Create or overwrite a whole file.", ("path", "content")),
        ("replace", "Replace one exact occurrence of `old` by `new` in a file.", ("path", "old", "new")),
        ("undo", "Undo the last edit of a file.", ("path",)),
        ("done", "Finish: the task is solved.", ()),
    ]
]
