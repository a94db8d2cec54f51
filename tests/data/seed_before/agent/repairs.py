"""Repairs for weak models. Optional: the agent works without this file."""
import ast
import re
import textwrap
from difflib import SequenceMatcher

from agent.tools import ToolError, Workspace, indent_of

HINT = "\nTo change whole functions you may also send a python block, the file's path on its first line."
NOT_YET = "The checks still fail, so the task is not solved yet. Write or fix the code now."
NUDGE = "\n\nEdit the code now: send the whole fixed function in a python block."  # 0.5B: 12 of 12 did, 7 without


def parse(text: str, block: re.Match | None) -> tuple[str, dict] | None:
    """A python block becomes a merge into its file; a bare "done" near the end finishes."""
    if block and block[1].lower() in ("python", "py", ""):
        return "python", {"path": block[2].strip(), "code": block[3]}
    return ("done", {}) if not block and re.search(r"(?<!`)\b(done|DONE|TASK COMPLETE)\b", text[-200:]) else None


def refuse_done(agent) -> str | None:  # agent: loop.Agent
    """Once, a "done" while the check still fails is sent back: weak models say it too early."""
    settled = not agent.failing or any(m["content"] == NOT_YET for m in agent.messages)
    return None if settled or agent.workspace.bash(agent.check, timeout=120).endswith("[exit code 0]") else NOT_YET


def defined(source: str) -> dict[str, ast.stmt]:
    """Functions, classes and constants by name, methods as Class.method ({} if it does not parse)."""
    try:
        body = ast.parse(source).body
    except SyntaxError:
        return {}
    found: dict[str, ast.stmt] = {}
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found[node.name] = node
            if isinstance(node, ast.ClassDef):
                found.update({f"{node.name}.{m.name}": m for m in node.body if isinstance(m, ast.FunctionDef)})
        elif isinstance(node, ast.Assign):
            found.update({t.id: node for t in node.targets if isinstance(t, ast.Name)})
    return found


def near(ws: Workspace, path: str, code: str) -> str | None:
    """A few lines, each like one of a file (a def only if lines were asked for), replace those."""
    new, found = [t.strip() for t in code.splitlines() if t.strip() and not t.lstrip().startswith("#")], []
    if 0 < len(new) <= 4 and (ws.lines or not re.search(r"(?m)^\s*(async )?(def|class) .*:\s*\n\s", code)):
        for file in [ws.path(path)] if path else sorted(ws.root.rglob("*.py")):
            old = file.read_text(errors="replace").splitlines() if file.is_file() else []
            like = [max((SequenceMatcher(None, s.strip(), t).ratio(), i) for i, s in enumerate(old + [""])) for t in new]
            if min(like)[0] >= 0.6 and len({i for _, i in like}) == len(new):
                found.append((sum(r for r, _ in like), file.relative_to(ws.root).as_posix(), old, [i for _, i in like]))
    _, name, old, at = max(found, default=(0.0, "", [], []))
    put = {i: new[n] for n, i in enumerate(at) if not old[i].strip().startswith(new[n])}  # a prefix: a cut copy
    return ws.write(name, "\n".join(indent_of(s) + put[i] if i in put else s for i, s in enumerate(old))) if at else None


def merge(ws: Workspace, path: str, code: str) -> str:
    """Each function, method or constant of `code` replaces the one of its name (by syntax tree), or is added."""
    code, path = textwrap.dedent(code), path or next(iter(re.findall(r"[\w./-]+\.py", code.split("\n", 1)[0])), "")
    if (edited := near(ws, path, code)) is not None:
        return edited
    try:  # an existing class: method by method
        ast.parse(code)
    except SyntaxError as exc:  # definitions, then unindented text (an echo): keep those
        head, bad = code.splitlines()[:(exc.lineno or 1) - 1], code.splitlines()[(exc.lineno or 1) - 1:][:1]
        if not defined(code := "\n".join(head)) or not bad or indent_of(bad[0]):
            raise ToolError(f"Your python block does not parse (line {exc.lineno}: {exc.msg}). Send it whole again.")
    new = {name: node for name, node in defined(code).items() if "." not in name}
    sources = [] if path else sorted(ws.root.rglob("*.py"))  # no path: the one file that defines the names
    hits = [p for p in sources if {n.split(".")[-1] for n in defined(p.read_text(errors="replace"))} & set(new)]
    if not (path := path or (hits[0].relative_to(ws.root).as_posix() if len(hits) == 1 else "")):
        raise ToolError("Put the file's path after the word python on the block's first line.")
    lines, new_lines = (t.read_text() if (t := ws.path(path)).is_file() else "").splitlines(), code.splitlines()
    if not (old := defined("\n".join(lines))):
        return ws.write(path, code)
    if not new:
        raise ToolError("Your python block holds no complete function, class or constant that parses.")
    split = {n for n, v in new.items() if isinstance(v, ast.ClassDef) and isinstance(old.get(n), ast.ClassDef)}
    new = {n: v for n, v in defined(code).items() if "." in n and n.split(".")[0] in split or n in set(new) - split}
    new = {n: v for n, v in new.items() if ws.target not in new or n == ws.target or n not in old}
    imports = [line for line in new_lines if line.startswith(("import ", "from ")) and line not in lines]
    first = lambda node: min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
    places = {n: n if n in old else next((k for k in old if k.endswith("." + n)), None) for n in new}
    for name, node in sorted(new.items(), key=lambda item: -old[places[item[0]]].lineno if places[item[0]] else 0):
        text = textwrap.dedent("\n".join(new_lines[first(node) - 1: node.end_lineno])).splitlines()
        if places[name]:
            at = old[places[name]]
            lines[first(at) - 1: at.end_lineno] = [indent_of(lines[at.lineno - 1]) + t if t else t for t in text]
        else:
            lines += ["", ""] + text
    return ws.write(path, "\n".join(imports + lines))
