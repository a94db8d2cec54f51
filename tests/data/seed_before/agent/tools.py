"""The agent's hands: a shell with a timeout and an output cap, and a file editor."""
import re
import subprocess
from pathlib import Path


class ToolError(Exception):
    """A tool could not do what was asked; the message is shown to the model."""


def cap(text: str, limit: int = 4000) -> str:
    cut = len(text) - limit
    return text if cut <= 0 else f"{text[:limit // 2]}\n... [{cut} characters cut] ...\n{text[-limit // 2:]}"


class Workspace:
    def __init__(self, root: Path, timeout: float = 60.0) -> None:
        self.root, self.timeout, self.edits, self.lines, self.target = root, timeout, 0, False, ""  # what improve asks

    def path(self, name: str) -> Path:
        target = (self.root / name.strip().strip("'\"`")).resolve()
        if self.root.resolve() not in target.parents:
            raise ToolError(f"{name!r}: give a file path inside the repository.")
        return target

    def bash(self, command: str, timeout: float | None = None) -> str:
        try:
            done = subprocess.run(["bash", "-c", command], cwd=self.root, capture_output=True, text=True,
                                  errors="replace", timeout=timeout or self.timeout, check=False)
        except subprocess.TimeoutExpired:
            return f"[timed out after {timeout or self.timeout:.0f} s]"
        output = f"{done.stdout}{done.stderr}\n[exit code {done.returncode}]".lstrip("\n")
        return cap(re.sub(r" in \d+(\.\d+)?s\b", "", output))  # no run times: a replay shows the same text

    def write(self, path: str, content: str) -> str:
        target, content = self.path(path), content if content.endswith("\n") else content + "\n"
        if target.is_file() and target.read_text() == content:
            raise ToolError(f"That edit changed nothing in {path}. Make the change.")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content)
        self.edits += 1
        return f"Wrote {path} ({len(content.splitlines())} lines)."

    def replace(self, path: str, old: str, new: str) -> str:  # exact text, or lines at another indent
        target = self.path(path)
        text = target.read_text() if target.is_file() else ""
        lines, want = text.splitlines(), [s.strip() for s in old.splitlines()]
        hits = [i for i in range(len(lines)) if want and [s.strip() for s in lines[i:i + len(want)]] == want]
        if old and text.count(old) != 1 and len(hits) == 1:  # the file's indent
            have, given, at = indent_of(lines[hits[0]]), indent_of(old.splitlines()[0]), hits[0]
            new = "\n".join(have + t.removeprefix(given) if t.strip() else t for t in new.splitlines())
            text, old = "\n".join(lines), "\n".join(lines[at:at + len(want)])
        if not old or text.count(old) != 1:
            raise ToolError(f"The old text occurs {text.count(old) if old else 0} times in {path}; copy it exactly.")
        return self.write(path, text.replace(old, new, 1)).replace("Wrote", "Replaced 1 occurrence in", 1)


def indent_of(line: str) -> str:
    return line[:len(line) - len(line.lstrip())]

