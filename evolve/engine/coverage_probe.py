"""Run an agent's module under line coverage of its own files: the bootstrap evolve.engine.spectra injects.

The engine runs this file's text as `python3 -c TEXT OUT MODULE ARGS...` in the agent's sandbox, in place
of `python3 -m MODULE ARGS...`, with the agent's root as the working directory. It needs only the standard
library of the sandbox's Python (3.11 in the base image, so `sys.settrace` rather than `sys.monitoring`),
and leaves two files in the directory OUT:

- `lines`: each line of a file below the working directory the first time it runs, `PATH<TAB>LINE`, the
  path relative to that directory. Line-buffered, so a run killed at its timeout keeps what it ran.
- `tools`: one JSON object a line for each command the agent ran and read the output of through
  `subprocess` (`Popen.communicate`, which `run` and `check_output` use): the agent's line that started
  it (`path`, `line`), the command (`command`: its arguments joined, cut to COMMAND_CHARS), the output's
  length (`chars`), its exit status and the output's start (`text`).
- `values`: one JSON object a line for each line the first time it runs, where it reads a value
  (evolve.engine.line_values): `path`, `line` and `values` ([[expression, repr], ...]), for the first
  VALUE_LINES such lines.

The engine runs it after the text of evolve.engine.line_values (`evolve.engine.spectra.bootstrap`).

Only the agent's own process is traced (not the commands it starts). It runs inside the agent's sandbox,
so what it writes is the agent's to change: the engine reads it as untrusted data.
"""

import json
import os
import runpy
import subprocess
import sys
import threading
from types import FrameType
from typing import Any

if "LineValues" not in globals():  # imported (tests, type checks); the engine's text defines it first
    from evolve.engine.line_values import LineValues

TEXT_CHARS = 20_000
"""Of each command's output, the start kept in `tools` (its full length is kept too)."""
COMMAND_CHARS = 300
"""Of each command's arguments (joined by spaces), the start kept in `tools`."""
TOOL_RECORDS = 400
"""Commands recorded at most; later ones are not."""
VALUE_LINES = 400
"""Lines whose values are recorded at most (the first to run)."""


def main() -> None:
    out, module, args = sys.argv[1], sys.argv[2], sys.argv[3:]
    root = os.path.join(os.getcwd(), "")
    os.makedirs(out, exist_ok=True)
    lines = open(os.path.join(out, "lines"), "a", buffering=1, encoding="utf-8")  # noqa: SIM115 (open till exit)
    tools = open(os.path.join(out, "tools"), "a", buffering=1, encoding="utf-8")  # noqa: SIM115
    values = open(os.path.join(out, "values"), "a", buffering=1, encoding="utf-8")  # noqa: SIM115
    seen: set[tuple[str, int]] = set()
    recorded = [0, 0]  # commands, lines with values
    reader = LineValues()

    def local(frame: FrameType, event: str, arg: Any) -> Any:
        if event == "line":
            key = (frame.f_code.co_filename, frame.f_lineno)
            if key not in seen:
                seen.add(key)
                lines.write(f"{key[0][len(root) :]}\t{key[1]}\n")
                held = reader.read(frame) if recorded[1] < VALUE_LINES else []
                if held:
                    recorded[1] += 1
                    record = {"path": key[0][len(root) :], "line": key[1], "values": held}
                    values.write(json.dumps(record) + "\n")
        return local

    def call(frame: FrameType, event: str, arg: Any) -> Any:
        return local if frame.f_code.co_filename.startswith(root) else None

    def site() -> tuple[str, int] | None:
        frame: FrameType | None = sys._getframe(2)
        while frame is not None and not frame.f_code.co_filename.startswith(root):
            frame = frame.f_back
        return None if frame is None else (frame.f_code.co_filename[len(root) :], frame.f_lineno)

    communicate = subprocess.Popen.communicate

    def recording(self: subprocess.Popen, *a: Any, **kw: Any) -> Any:
        stdout, stderr = communicate(self, *a, **kw)
        where = site()
        if where is not None and recorded[0] < TOOL_RECORDS:
            recorded[0] += 1
            text = _text(stdout) + _text(stderr)
            tools.write(
                json.dumps(
                    {
                        "path": where[0],
                        "line": where[1],
                        "command": _command(self.args)[:COMMAND_CHARS],
                        "chars": len(text),
                        "returncode": self.returncode,
                        "text": text[:TEXT_CHARS],
                    }
                )
                + "\n"
            )
        return stdout, stderr

    subprocess.Popen.communicate = recording  # type: ignore[method-assign]
    sys.path[0] = os.getcwd()  # as `python3 -m` has it (with -c it is '')
    sys.argv = [module, *args]
    threading.settrace(call)
    sys.settrace(call)
    runpy.run_module(module, run_name="__main__", alter_sys=True)


def _command(args: object) -> str:
    """A command's arguments as one line (a string as given, a list joined by spaces)."""
    if isinstance(args, (str, bytes, os.PathLike)):
        return _text(os.fsdecode(args))
    if isinstance(args, (list, tuple)):
        return " ".join(
            _text(os.fsdecode(a)) if isinstance(a, (str, bytes, os.PathLike)) else str(a) for a in args
        )
    return ""


def _text(stream: object) -> str:
    if isinstance(stream, bytes):
        return stream.decode("utf-8", errors="replace")
    return stream if isinstance(stream, str) else ""


if __name__ == "__main__":
    main()
