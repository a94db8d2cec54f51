"""The agent's two tools: a shell and a file editor, both confined to one directory."""
import subprocess
from pathlib import Path


def bash(root: Path, command: str, timeout: int = 120) -> str:
    """Run `command` in `root`; its output (cut to its last 4,000 characters) and exit status."""
    try:
        done = subprocess.run(["bash", "-c", command], cwd=root, capture_output=True, text=True,
                              timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return f"(timed out after {timeout} s)"
    return f"{(done.stdout + done.stderr)[-4000:]}\n(exit {done.returncode})"


def inside(root: Path, path: str) -> Path:
    """`path` under `root`; ValueError when it points outside."""
    target = (root / path).resolve()
    if target != root.resolve() and root.resolve() not in target.parents:
        raise ValueError(f"{path} is outside {root}")
    return target


def write(root: Path, path: str, text: str) -> str:
    """Create or overwrite a whole file."""
    target = inside(root, path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text)
    return f"wrote {path}"


def replace(root: Path, path: str, old: str, new: str) -> str:
    """Replace the one occurrence of `old` in a file by `new`."""
    target = inside(root, path)
    text = target.read_text() if target.is_file() else ""
    if text.count(old) != 1:
        return f"error: the old text occurs {text.count(old)} times in {path}, not once"
    target.write_text(text.replace(old, new))
    return f"replaced in {path}"
