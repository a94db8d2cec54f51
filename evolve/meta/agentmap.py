"""The map of an agent: its Python files and, from their syntax trees, the functions, classes, methods
and module-level constants each defines, with line ranges.

The meta step shows the map to the diagnosis model (which must name one target from it) and to the
improve step (which shows the named target's source, not the whole agent). A target is named
`FILE:NAME`: `agent/shell.py:cap`, `agent/core.py:Runner.step`, `agent/text.py:SYSTEM`.
The map reads agent-written code as text only; nothing of it is imported or run.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

from evolve import syntax
from evolve.untrusted import read_text

SKIP_DIRS = frozenset({".git", "__pycache__", ".pytest_cache", ".venv", "node_modules"})
_CONSTANT = re.compile(r"^_?[A-Z][A-Z0-9_]*$")
_DECORATION = re.compile(r"\s*(\(.*?\))?\s*(\[.*)?$")


@dataclass(frozen=True)
class Symbol:
    """One thing a file defines at its top level (or a method of a top-level class)."""

    name: str
    """`cap`, `Runner`, `Runner.step`, `SYSTEM`."""
    kind: str
    """function | class | method | constant."""
    start: int
    """First line (1-based; a decorator's line when there is one)."""
    end: int
    """Last line, inclusive."""
    signature: str = ""
    """The parameter names of a function or method (`text, limit`)."""
    summary: str = ""
    """The first line of its docstring."""


@dataclass(frozen=True)
class FileMap:
    path: str
    """Relative to the agent's root, `/`-separated."""
    lines: int
    symbols: tuple[Symbol, ...]
    error: str = ""
    """Why the file has no symbols (it does not parse)."""


@dataclass(frozen=True)
class AgentMap:
    files: tuple[FileMap, ...]

    def targets(self) -> tuple[str, ...]:
        """Every target's canonical name, `FILE:NAME`, in file and line order."""
        return tuple(f"{file.path}:{symbol.name}" for file in self.files for symbol in file.symbols)

    def symbol(self, target: str) -> tuple[FileMap, Symbol] | None:
        """The file and symbol a canonical target names, or None."""
        path, _, name = target.partition(":")
        for file in self.files:
            if file.path == path:
                return next(((file, s) for s in file.symbols if s.name == name), None)
        return None

    def resolve(self, text: str) -> str | None:
        """The canonical target a loosely written name means, or None when it names none (or several).

        Accepted: `agent/shell.py:cap`, `shell.py:cap`, `agent/shell.py::cap`, `agent.shell.cap`,
        `agent/core.py:Runner.step`, `Runner.step`, `cap()` (a bare name only when one file defines it),
        and a file alone (`agent/shell.py`) when it defines nothing or exactly one symbol."""
        text = text.strip().strip("`'\"").replace("::", ":")
        text = _DECORATION.sub("", text).strip()  # a copied map line: "FILE:NAME(params)  [lines 3-9]"
        if not text:
            return None
        if ":" in text:
            path, _, name = text.partition(":")
        elif ".py" in text:
            path, name = text.split(".py", 1)[0] + ".py", text.split(".py", 1)[1].lstrip(".")
        else:  # dotted module path (agent.shell.cap) or a bare name (cap, Runner.step)
            path, name = self._split_dotted(text)
        path, name = path.strip(), name.strip()
        files = [f for f in self.files if not path or f.path == path or f.path.endswith("/" + path)]
        if path and len(files) != 1:
            return None
        if not name:
            return f"{files[0].path}:{files[0].symbols[0].name}" if len(files[0].symbols) == 1 else None
        hits = [f"{f.path}:{s.name}" for f in files for s in f.symbols if s.name == name]
        return hits[0] if len(hits) == 1 else None

    def _split_dotted(self, text: str) -> tuple[str, str]:
        parts = text.split(".")
        for cut in range(len(parts) - 1, 0, -1):
            path = "/".join(parts[:cut]) + ".py"
            if any(f.path == path or f.path.endswith("/" + path) for f in self.files):
                return path, ".".join(parts[cut:])
        return "", text

    def render(self, limit: int = 6000, *, summaries: bool = True, qualified: bool = False) -> str:
        """The map as a prompt shows it: one line per file and per symbol (with its docstring's first
        line unless `summaries` is off), at most `limit` characters. `qualified`: each symbol line
        starts with its target name (`agent/shell.py:cap`), for a reply that must name one, and files
        that define nothing are left out."""
        out = []
        # a reply that must name a target copied an empty file's line (`agent/__init__.py:1`): none shown
        files = [f for f in self.files if f.symbols or f.error] if qualified else self.files
        for file in files:
            out.append(f"{file.path} ({file.lines} lines)" + (f": {file.error}" if file.error else ""))
            for s in file.symbols:
                indent = "    " if s.kind == "method" else "  "
                name = s.name.rsplit(".", 1)[-1]
                head = {
                    "function": f"def {name}({s.signature})",
                    "method": f"def {name}({s.signature})",
                    "class": f"class {name}",
                    "constant": name,
                }[s.kind]
                where = f"line {s.start}" if s.start == s.end else f"lines {s.start}-{s.end}"
                if qualified:  # the name to copy first: a callable's parameters, else what it is
                    target = f"{file.path}:{s.name}"
                    head = (
                        f"{target}({s.signature})"
                        if s.kind in ("function", "method")
                        else f"{target} ({s.kind})"
                    )
                out.append(
                    f"{indent}{head}  [{where}]" + (f"  {s.summary}" if s.summary and summaries else "")
                )
        text = "\n".join(out)
        return text if len(text) <= limit else text[:limit].rsplit("\n", 1)[0] + "\n[... map cut]"


def agent_files(root: Path) -> list[str]:
    """The agent's Python files (tests excluded: they check the agent, they are not a target)."""
    names = []
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root).parts
        if SKIP_DIRS & set(parts) or is_test(parts):
            continue
        names.append("/".join(parts))
    return names


def is_test(parts: tuple[str, ...] | list[str]) -> bool:
    """Whether a file of the agent (its path's parts, relative to the agent's root) is one of its tests: in a
    `tests` folder, or named `test_*` or `conftest*`. The meta step's edits and rankings leave them alone."""
    return "tests" in parts[:-1] or parts[-1].startswith(("test_", "conftest"))


def file_map(path: str, source: str) -> FileMap:
    """The symbols of one file's source."""
    lines = len(source.splitlines())
    try:
        tree = syntax.parse(source)
    except SyntaxError as exc:
        return FileMap(path, lines, (), f"does not parse (line {exc.lineno}: {exc.msg})")
    symbols: list[Symbol] = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            symbols.append(_function(node, node.name, "function"))
        elif isinstance(node, ast.ClassDef):
            symbols.append(Symbol(node.name, "class", _first(node), _end(node), "", _summary(node)))
            symbols += [
                _function(item, f"{node.name}.{item.name}", "method")
                for item in node.body
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef))
            ]
        else:
            for name in _assigned(node):
                if _CONSTANT.match(name) and all(s.name != name for s in symbols):
                    symbols.append(Symbol(name, "constant", node.lineno, _end(node)))
    return FileMap(path, lines, tuple(symbols))


def _assigned(node: ast.stmt) -> list[str]:
    if isinstance(node, ast.Assign):
        return [t.id for t in node.targets if isinstance(t, ast.Name)]
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
        return [node.target.id]
    return []


def _function(node: ast.FunctionDef | ast.AsyncFunctionDef, name: str, kind: str) -> Symbol:
    args = node.args
    names = [a.arg for a in (*args.posonlyargs, *args.args)]
    names = names[1:] if kind == "method" and names[:1] in (["self"], ["cls"]) else names
    names += [f"*{args.vararg.arg}"] if args.vararg else (["*"] if args.kwonlyargs else [])
    names += [a.arg for a in args.kwonlyargs] + ([f"**{args.kwarg.arg}"] if args.kwarg else [])
    return Symbol(name, kind, _first(node), _end(node), ", ".join(names), _summary(node))


def _first(node: ast.stmt) -> int:
    decorators = getattr(node, "decorator_list", [])
    return min([node.lineno] + [d.lineno for d in decorators])


def _end(node: ast.stmt) -> int:
    return node.end_lineno or node.lineno


def _summary(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef, limit: int = 90) -> str:
    doc = ast.get_docstring(node)
    line = doc.strip().splitlines()[0].strip() if doc and doc.strip() else ""
    return line if len(line) <= limit else line[: limit - 3] + "..."


def agent_map(root: Path) -> AgentMap:
    """The map of the agent whose repository is `root` (the directory holding `agent/`)."""
    # the agent's own files: one that is no regular file (a link to a directory) reads as empty
    return AgentMap(tuple(file_map(name, read_text(root / name)) for name in agent_files(root)))


def source_of(root: Path, target: str) -> str:
    """The source lines of `target` (`agent/shell.py:cap`, loosely written names resolved as
    `AgentMap.resolve` does), as they stand in the file (a method keeps its indentation).

    KeyError naming the target when the map has no such symbol."""
    found = agent_map(root)
    canonical = found.resolve(target)
    hit = found.symbol(canonical) if canonical else None
    if hit is None:
        raise KeyError(f"{target!r} names no function, class, method or constant of the agent")
    file, symbol = hit
    lines = read_text(root / file.path).splitlines()
    return "\n".join(lines[symbol.start - 1 : symbol.end]) + "\n"
