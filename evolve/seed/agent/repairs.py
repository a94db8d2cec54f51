"""Repairs for weak models (small models slip in set ways). Optional: without this file the agent works."""
import ast
import re

from agent.tools import ToolError, Workspace

HINT = "\nTo write or fix functions you may also send ```python path/to/file.py with the whole new functions."
NOT_YET = "The checks still fail, so the task is not solved yet. Write or fix the code now."
LESSON = ("You are a coding agent. On an earlier task you had this problem:\n{problem}\n\nWrite one short "
          "sentence of advice to yourself that would help next time. Reply with the sentence only.")


def parse(text: str, block: re.Match | None) -> tuple[str, dict] | None:
    """A python block becomes a merge into its file; a bare "done" near the end finishes."""
    if block and block[1].lower() in ("python", "py", ""):
        return "python", {"path": block[2].strip(), "code": block[3]}
    return ("done", {}) if not block and re.search(r"\b(done|DONE|TASK COMPLETE)\b", text[-200:]) else None


def refuse_done(agent) -> str | None:  # agent: loop.Agent
    """Once, a "done" while the check still fails is sent back: weak models say it too early."""
    settled = not agent.failing or any(m["content"] == NOT_YET for m in agent.messages)
    return None if settled or agent.workspace.bash(agent.check, timeout=120).endswith("[exit code 0]") else NOT_YET


def defined(source: str) -> dict[str, ast.stmt]:
    """Top-level functions and classes by name (none when the source does not parse)."""
    try:
        return {n.name: n for n in ast.parse(source).body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    except SyntaxError:
        return {}


def merge(ws: Workspace, path: str, code: str) -> str:
    """Replace the file's functions that `code` redefines, append its new ones, put its imports on top."""
    new = defined(code)  # no path (small models forget it): the one file that defines the block's functions
    sources = [] if path else sorted(ws.root.rglob("*.py"))
    hits = [p for p in sources if set(new) & set(defined(p.read_text(errors="replace")))]
    if not (path := path or (hits[0].relative_to(ws.root).as_posix() if len(hits) == 1 else "")):
        raise ToolError("Start the block with ```python path/to/file.py so I know which file it is.")
    target = ws.path(path)
    lines, new_lines = (target.read_text() if target.is_file() else "").splitlines(), code.splitlines()
    if not (old := defined("\n".join(lines))):
        return ws.write(path, code)
    if not new:
        raise ToolError("Your python block holds no complete function or class that parses.")
    imports = [line for line in new_lines if line.startswith(("import ", "from ")) and line not in lines]
    first = lambda node: min([node.lineno] + [d.lineno for d in node.decorator_list])
    for name, node in sorted(new.items(), key=lambda item: -old[item[0]].lineno if item[0] in old else 0):
        text = new_lines[first(node) - 1: node.end_lineno]
        if name in old:
            lines[first(old[name]) - 1: old[name].end_lineno] = text
        else:
            lines += ["", ""] + text
    return ws.write(path, "\n".join(imports + lines))


def learn(agent, instructions: str) -> None:  # agent: loop.Agent (not imported: loop imports this module)
    """`improve` changed nothing (weak models echo): add one sentence of advice to the system prompt."""
    ask = LESSON.format(problem=instructions.strip()[:1500])
    reply = agent.model.query([{"role": "user", "content": ask}])["content"] or ""
    agent.log({"event": "lesson", "role": "assistant", "content": reply})
    words = [s.strip(" -*`\"'") for s in reply.splitlines() if len(re.findall(r"[A-Za-z]{2,}", s)) > 3]
    if words and not words[0].lower().startswith(("python", "bash", "```")):
        with (agent.workspace.root / "agent" / "prompts.py").open("a") as handle:
            handle.write(f"\nSYSTEM += {chr(10) + 'Lesson: ' + words[0][:200]!r}\n")
