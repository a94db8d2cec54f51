"""What the model may call: the function schemas it is offered and what each call does in the work tree."""
import json
import subprocess
from pathlib import Path


def _schema(called: str, purpose: str, **fields: str) -> dict:
    properties = {field: {"type": "string", "description": text} for field, text in fields.items()}
    return {"type": "function", "function": {"name": called, "description": purpose, "parameters": {
        "type": "object", "properties": properties, "required": list(fields)}}}


FUNCTIONS = [
    _schema("bash", "Run a shell command in the work tree; returns its output and exit status.",
            command="the command line"),
    _schema("read_file", "Return a file of the work tree with numbered lines.", path="relative path"),
    _schema("write_file", "Create or overwrite a whole file.", path="relative path",
            content="the whole text"),
    _schema("edit_file", "Replace one exact, unique passage of a file.", path="relative path",
            old="the passage as it is now", new="what replaces it"),
    _schema("finish", "End the session: the work is done.", summary="what was done"),
]


def _within(tree: Path, path: str) -> Path:
    spot = (tree / path).resolve()
    if tree.resolve() not in spot.parents:
        raise PermissionError(f"{path} is not inside the work tree")
    return spot


def perform(tree: Path, name: str, arguments: str) -> str:
    """The text the model sees as the result of calling `name` with JSON `arguments`."""
    try:
        given = json.loads(arguments or "{}")
    except json.JSONDecodeError as exc:
        return f"error: the arguments are not valid JSON ({exc})"
    try:
        if name == "bash":
            ran = subprocess.run(["bash", "-c", given["command"]], cwd=tree, capture_output=True,
                                 text=True, timeout=180, check=False)
            return f"exit status {ran.returncode}\n{(ran.stdout + ran.stderr)[-6000:]}"
        if name == "read_file":
            lines = _within(tree, given["path"]).read_text().splitlines()
            return "\n".join(f"{number:5} {line}" for number, line in enumerate(lines, 1))[:12000]
        if name == "write_file":
            spot = _within(tree, given["path"])
            spot.parent.mkdir(parents=True, exist_ok=True)
            spot.write_text(given["content"])
            return f"{given['path']}: {len(given['content'])} characters written"
        if name == "edit_file":
            spot = _within(tree, given["path"])
            text = spot.read_text()
            if text.count(given["old"]) != 1:
                count = text.count(given["old"])
                return f"error: the passage occurs {count} times in {given['path']}, not once"
            spot.write_text(text.replace(given["old"], given["new"], 1))
            return f"{given['path']}: edited"
    except KeyError as exc:
        return f"error: {name} needs the argument {exc}"
    except (OSError, subprocess.SubprocessError) as exc:
        return f"error: {exc}"
    return f"error: there is no function {name}"
