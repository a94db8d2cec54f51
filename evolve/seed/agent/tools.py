"""The agent's hands: a shell with a timeout and an output cap, and a file editor with undo."""

from __future__ import annotations

import ast
import re
import subprocess
import textwrap
from dataclasses import dataclass, field
from pathlib import Path

OUTPUT_CAP = 4000


class ToolError(Exception):
    """A tool could not do what was asked; the message is shown to the model."""


_TIMING = re.compile(r" in \d+(?:\.\d+)?s(?: \(\d+:\d\d:\d\d\))?")


def steady(output: str) -> str:
    """Command output without test run times, so the same run shows the model the same text (replay)."""
    return _TIMING.sub("", output)


def cap(text: str, limit: int = OUTPUT_CAP) -> str:
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]}\n... [{len(text) - limit} characters cut] ...\n{text[-half:]}"


@dataclass
class Workspace:
    root: Path
    timeout: float = 60.0
    history: dict[str, list[str | None]] = field(default_factory=dict)
    edits: int = 0

    def path(self, name: str) -> Path:
        name = name.strip().strip("'\"`")
        if not name:
            raise ToolError("No file path given.")
        target = (self.root / name).resolve()
        if self.root.resolve() not in (target, *target.parents):
            raise ToolError(f"{name} is outside the repository.")
        return target

    def bash(self, command: str, timeout: float | None = None) -> str:
        try:
            done = subprocess.run(["bash", "-c", command], cwd=self.root, capture_output=True, text=True,
                                  timeout=timeout or self.timeout, errors="replace", check=False)
        except subprocess.TimeoutExpired as exc:
            out = (exc.stdout or b"").decode(errors="replace") if isinstance(exc.stdout, bytes) else exc.stdout or ""
            return cap(f"{out}\n[timed out after {timeout or self.timeout:.0f} s]")
        return cap(steady(f"{done.stdout}{done.stderr}\n[exit code {done.returncode}]".lstrip("\n")))

    def view(self, name: str, limit: int = 400) -> str:
        target = self.path(name)
        if target.is_dir():
            return "\n".join(sorted(p.name + ("/" if p.is_dir() else "") for p in target.iterdir()))
        if not target.exists():
            raise ToolError(f"{name} does not exist.")
        lines = target.read_text(errors="replace").splitlines()
        shown = "\n".join(f"{i:4d}  {line}" for i, line in enumerate(lines[:limit], 1))
        return shown + (f"\n... [{len(lines) - limit} more lines]" if len(lines) > limit else "")

    def write(self, name: str, content: str) -> str:
        target = self.path(name)
        if not content.strip() and target.exists() and target.read_text().strip():
            raise ToolError(f"Your block is empty; that would erase {name}. Put the code inside the block.")
        self._remember(name, target)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content if content.endswith("\n") else content + "\n")
        self.edits += 1
        return f"Wrote {name} ({len(content.splitlines())} lines)."

    def replace(self, name: str, old: str, new: str) -> str:
        target = self.path(name)
        if not target.exists():
            raise ToolError(f"{name} does not exist.")
        text = target.read_text()
        count = text.count(old) if old else 0
        if count == 0:
            stripped = old.strip()
            if stripped and text.count(stripped) == 1:
                old, count = stripped, 1
                new = new.strip()
            else:
                raise ToolError(f"The SEARCH text was not found in {name}; copy it exactly from the file.")
        if count > 1:
            raise ToolError(f"The SEARCH text occurs {count} times in {name}; include more lines to make it unique.")
        self._remember(name, target)
        target.write_text(text.replace(old, new, 1))
        self.edits += 1
        return f"Replaced 1 occurrence in {name}."

    def undo(self, name: str) -> str:
        target = self.path(name)
        stack = self.history.get(str(target))
        if not stack:
            raise ToolError(f"No edit of {name} to undo.")
        previous = stack.pop()
        if previous is None:
            target.unlink(missing_ok=True)
        else:
            target.write_text(previous)
        return f"Undid the last edit of {name}."

    def merge_python(self, code: str, name: str, candidates: list[str]) -> str:
        """Put the functions/classes of `code` into a file: replace same-named definitions, add new ones."""
        code = textwrap.dedent(code)
        try:
            tree = ast.parse(code)
        except SyntaxError as exc:
            code = parsable_prefix(code, exc.lineno or 0)
            if code is None:
                raise ToolError(f"Your python block does not parse: {exc.msg} (line {exc.lineno}).") from exc
            tree = ast.parse(code)
        defs = set(top_level_names(tree))
        if name and (not self.path(name).exists() or not defs):
            return self.write(name, code)
        for candidate in ([name] if name else candidates):
            target = self.path(candidate)
            if target.exists() and defs & _defined(target.read_text()):
                return self.write(candidate, merge_definitions(target.read_text(), code))
        for candidate in ([name] if name else candidates):
            target = self.path(candidate)
            merged = merge_methods(target.read_text(), tree, code) if target.exists() else None
            if merged is not None:
                return self.write(candidate, merged)
        if name:
            return self.write(name, merge_definitions(self.path(name).read_text(), code))
        raise ToolError("I could not tell which file this code belongs to; start the block with ```python path/to/file.py")

    def _remember(self, name: str, target: Path) -> None:
        self.history.setdefault(str(target), []).append(target.read_text() if target.exists() else None)


def parsable_prefix(code: str, bad_line: int) -> str | None:
    """The longest run of leading lines, ending before `bad_line`, that parses and defines something: a
    small model often writes good code, then leaves the block open and echoes the prompt after it."""
    lines = code.splitlines()
    for end in range(min(bad_line, len(lines) + 1) - 1, 0, -1):
        prefix = "\n".join(lines[:end])
        try:
            tree = ast.parse(prefix)
        except SyntaxError:
            continue
        return prefix + "\n" if top_level_names(tree) else None
    return None


def _defined(source: str) -> set[str]:
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set()
    return set(top_level_names(tree))


def top_level_names(tree: ast.Module) -> dict[str, ast.stmt]:
    """The top-level definitions by name: functions, classes, and single-name assignments (`SOLVE = ...`)."""
    found: dict[str, ast.stmt] = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found[node.name] = node
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            found[node.targets[0].id] = node
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            found[node.target.id] = node
    return found


def merge_definitions(source: str, code: str) -> str:
    """Replace each top-level def/class/assignment of `source` that `code` redefines; append the others;
    add imports."""
    new_tree = ast.parse(code)
    new_lines = code.splitlines()
    old_lines = source.splitlines()
    try:
        old_tree = ast.parse(source)
    except SyntaxError:
        return code
    spans = {name: (_start(n), n.end_lineno) for name, n in top_level_names(old_tree).items()}
    new_names = {id(n): name for name, n in top_level_names(new_tree).items()}
    replacements: list[tuple[int, int, list[str]]] = []
    appended: list[str] = []
    imports: list[str] = []
    for node in new_tree.body:
        text = new_lines[_start(node) - 1: node.end_lineno]
        name = new_names.get(id(node))
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            imports += [line for line in text if line.strip() not in {x.strip() for x in old_lines}]
        elif name in spans:
            start, end = spans[name]
            replacements.append((start, end, text))
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Assign, ast.AnnAssign)):
            appended += ["", ""] + text
    for start, end, text in sorted(replacements, reverse=True):
        old_lines[start - 1: end] = text
    # new imports go after the file's own imports (or its docstring), never above `from __future__`
    header = [n.end_lineno for n in old_tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
    docstring = old_tree.body[:1] if old_tree.body and isinstance(old_tree.body[0], ast.Expr) else []
    at = max(header) if header else (docstring[0].end_lineno if docstring else 0)
    if imports:
        old_lines[at:at] = imports
    return "\n".join(old_lines + appended) + "\n"


def _with_receiver(lines: list[str], func: ast.FunctionDef, method: ast.FunctionDef) -> list[str]:
    """Give a function written without `self` (a small model's slip) the receiver the method had."""
    receiver = [a.arg for a in method.args.args[:1] if a.arg in ("self", "cls")]
    if not receiver or [a.arg for a in func.args.args[:1]] == receiver:
        return lines
    line = func.lineno - _start(func)
    lines = list(lines)
    lines[line] = re.sub(rf"(def\s+{func.name}\s*\()(\s*)(\)?)",
                         lambda m: m.group(1) + receiver[0] + ("" if m.group(3) else ", ") + m.group(3),
                         lines[line], count=1)
    return lines


def _start(node: ast.stmt) -> int:
    decorators = getattr(node, "decorator_list", [])
    return min([node.lineno] + [d.lineno for d in decorators])


def merge_methods(source: str, tree: ast.Module, code: str) -> str | None:
    """Replace methods of one class by the functions in `code` (re-indented); None when they match no class."""
    funcs = [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    try:
        old_tree = ast.parse(source)
    except SyntaxError:
        return None
    if not funcs:
        return None
    new_lines, lines = code.splitlines(), source.splitlines()
    for cls in (n for n in old_tree.body if isinstance(n, ast.ClassDef)):
        methods = {m.name: m for m in cls.body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))}
        if not all(f.name in methods for f in funcs):
            continue
        for func in sorted(funcs, key=lambda f: methods[f.name].lineno, reverse=True):
            method = methods[func.name]
            indent = " " * method.col_offset
            text = [indent + line if line.strip() else "" for line in new_lines[_start(func) - 1: func.end_lineno]]
            text = _with_receiver(text, func, method)
            lines[_start(method) - 1: method.end_lineno] = text
        return "\n".join(lines) + "\n"
    return None
