"""The agent's hands: a shell with a timeout and an output cap, and a file editor."""
import re
import subprocess
from pathlib import Path

RUN_TIME = re.compile(r" in \d+(\.\d+)?s\b")  # e.g. pytest's "1 passed in 0.12s"
CHECK_TIMEOUT = 120  # seconds for the repository's checks


class ToolError(Exception):
    """A tool could not do what was asked; the message is shown to the model."""


def cap(text: str, limit: int = 4000) -> str:
    """Its head and tail when longer than `limit`."""
    cut = len(text) - limit
    if cut <= 0:
        return text
    return f"{text[:limit // 2]}\n... [{cut} characters cut] ...\n{text[-limit // 2:]}"


def passed(output: str) -> bool:
    """Whether `Workspace.bash`'s output ends with exit code 0."""
    return output.endswith("[exit code 0]")


def indent_of(line: str) -> str:
    return line[:len(line) - len(line.lstrip())]


class Workspace:
    """The repository the agent edits; no path leads outside it."""

    def __init__(self, root: Path, timeout: float = 60.0) -> None:
        self.root = root
        self.timeout = timeout
        self.edits = 0
        self.asked_for_lines = False  # improve asked for the lines that decide it, not whole functions
        self.target = ""  # the NAME of improve's `Target: FILE:NAME`

    def path(self, name: str) -> Path:
        target = (self.root / name.strip().strip("'\"`")).resolve()
        if self.root.resolve() not in target.parents:
            raise ToolError(f"{name!r}: give a file path inside the repository.")
        return target

    def bash(self, command: str, timeout: float | None = None) -> str:
        """Output and exit code, capped; no run times, so that a replay shows the same text."""
        seconds = timeout or self.timeout
        try:
            done = subprocess.run(["bash", "-c", command], cwd=self.root, capture_output=True, text=True,
                                  errors="replace", timeout=seconds, check=False)
        except subprocess.TimeoutExpired:
            return f"[timed out after {seconds:.0f} s]"
        output = f"{done.stdout}{done.stderr}\n[exit code {done.returncode}]".lstrip("\n")
        return cap(RUN_TIME.sub("", output))

    def write(self, path: str, content: str) -> str:
        """The whole file; an edit that changes nothing is refused."""
        target = self.path(path)
        if not content.endswith("\n"):
            content += "\n"
        if target.is_file() and target.read_text() == content:
            raise ToolError(f"That edit changed nothing in {path}. Make the change.")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content)
        self.edits += 1
        return f"Wrote {path} ({len(content.splitlines())} lines)."

    def replace(self, path: str, old: str, new: str) -> str:
        """The one occurrence of `old` becomes `new`; `old` at another indent (a model drops a method's)
        is found too, and `new` moved to the file's indent."""
        target = self.path(path)
        text = target.read_text() if target.is_file() else ""
        if old and text.count(old) != 1:
            lines = text.splitlines()
            start = only_match(lines, old)
            if start is not None:
                given_indent = indent_of(old.splitlines()[0])
                new = reindent(new, given_indent, indent_of(lines[start]))
                text = "\n".join(lines)
                old = "\n".join(lines[start:start + len(old.splitlines())])
        occurrences = text.count(old) if old else 0
        if occurrences != 1:
            raise ToolError(f"The old text occurs {occurrences} times in {path}; copy it exactly.")
        return self.write(path, text.replace(old, new, 1)).replace("Wrote", "Replaced 1 occurrence in", 1)


def only_match(lines: list[str], old: str) -> int | None:
    """The one index where `old`'s lines start, spaces around them aside, or None."""
    wanted = [line.strip() for line in old.splitlines()]
    starts = []
    for start in range(len(lines)):
        window = [line.strip() for line in lines[start:start + len(wanted)]]
        if wanted and window == wanted:
            starts.append(start)
    return starts[0] if len(starts) == 1 else None


def reindent(text: str, given: str, wanted: str) -> str:
    """Each non-blank line's `given` indent replaced by `wanted`."""
    lines = [wanted + line.removeprefix(given) if line.strip() else line for line in text.splitlines()]
    return "\n".join(lines)
