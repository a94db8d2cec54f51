"""Repairs for weak models. Optional: the agent works without this file."""
import ast
import re
import textwrap
from dataclasses import dataclass
from difflib import SequenceMatcher
from pathlib import Path

from agent import prompts
from agent.tools import CHECK_TIMEOUT, ToolError, Workspace, indent_of, passed

DONE_WORD = re.compile(r"(?<!`)\b(done|DONE|TASK COMPLETE)\b")
PYTHON_PATH = re.compile(r"[\w./-]+\.py")
DEF_WITH_BODY = re.compile(r"(?m)^\s*(async )?(def|class) .*:\s*\n\s")
MOST_LINES = 4  # more lines than this are code to merge, not lines to replace
SIMILARITY = 0.6  # how alike a sent line and the file's line it replaces must be


def parse(text: str, block: re.Match | None) -> tuple[str, dict] | None:
    """A python block becomes a merge into its file; a bare "done" near the end finishes."""
    if block and block[1].lower() in ("python", "py", ""):
        return "python", {"path": block[2].strip(), "code": block[3]}
    if not block and DONE_WORD.search(text[-200:]):
        return "done", {}
    return None


def refuse_done(agent) -> str | None:  # agent: loop.Agent
    """Once, a "done" while the check still fails is sent back: weak models say it too early."""
    if not agent.failing:
        return None
    if any(message["content"] == prompts.NOT_YET for message in agent.messages):
        return None
    if passed(agent.workspace.bash(agent.check, timeout=CHECK_TIMEOUT)):
        return None
    return prompts.NOT_YET


def merge(workspace: Workspace, path: str, code: str) -> str:
    """Each function, method or constant of `code` replaces the one of its name (by syntax tree), or is added;
    a few lines replace the lines most like them. No path: the one on the first line, or the file defining
    them."""
    code = textwrap.dedent(code)
    if not path:
        path = path_on_first_line(code)
    edited = replace_similar_lines(workspace, path, code)
    if edited is not None:
        return edited
    code = parsed_part(code)
    sent = {name: node for name, node in definitions(code).items() if "." not in name}
    if not path:
        path = file_defining(workspace, set(sent))
    if not path:
        raise ToolError("Put the file's path after the word python on the block's first line.")
    file = workspace.path(path)
    lines = file.read_text().splitlines() if file.is_file() else []
    existing = definitions("\n".join(lines))
    if not existing:
        return workspace.write(path, code)
    if not sent:
        raise ToolError("Your python block holds no complete function, class or constant that parses.")
    chosen = definitions_to_merge(definitions(code), set(sent), existing, workspace.target)
    return workspace.write(path, merged(lines, code, chosen, existing))


def merged(lines: list[str], code: str, chosen: dict[str, ast.stmt], existing: dict[str, ast.stmt]) -> str:
    """The file's lines with each chosen definition of `code` in place of the one it replaces (or added at
    the end), and the imports of `code` the file lacks on top."""
    code_lines = code.splitlines()
    imports = [line for line in code_lines if line.startswith(("import ", "from ")) and line not in lines]
    places = {name: place_of(name, existing) for name in chosen}
    result = list(lines)

    def bottom_up(name: str) -> int:  # so the line numbers still to use hold; new names last, at the end
        place = places[name]
        return -existing[place].lineno if place else 0

    for name in sorted(chosen, key=bottom_up):
        node = chosen[name]
        source = "\n".join(code_lines[first_line(node) - 1:node.end_lineno])
        new_lines = textwrap.dedent(source).splitlines()
        if places[name]:
            replace_definition(result, existing[places[name]], new_lines)
        else:
            result += ["", ""] + new_lines
    return "\n".join(imports + result)


def path_on_first_line(code: str) -> str:
    """A path named on the block's first line (e.g. in a comment), or ""."""
    found = PYTHON_PATH.search(code.split("\n", 1)[0])
    return found[0] if found else ""


def parsed_part(code: str) -> str:
    """`code`, or its definitions before an unindented line that does not parse (an echoed prompt)."""
    try:
        ast.parse(code)
    except SyntaxError as exc:
        lines = code.splitlines()
        error_at = (exc.lineno or 1) - 1
        head = "\n".join(lines[:error_at])
        bad = lines[error_at:error_at + 1]
        if not definitions(head) or not bad or indent_of(bad[0]):
            error = f"Your python block does not parse (line {exc.lineno}: {exc.msg}). Send it whole again."
            raise ToolError(error)
        return head
    return code


def definitions(source: str) -> dict[str, ast.stmt]:
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
            for method in node.body:
                if isinstance(method, ast.FunctionDef):
                    found[f"{node.name}.{method.name}"] = method
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    found[target.id] = node
    return found


def file_defining(workspace: Workspace, names: set[str]) -> str:
    """The one Python file that defines any of `names` (a method by its own name), or ""."""
    found = []
    for file in sorted(workspace.root.rglob("*.py")):
        source = file.read_text(errors="replace")
        defined_there = {name.split(".")[-1] for name in definitions(source)}
        if defined_there & names:
            found.append(file)
    return found[0].relative_to(workspace.root).as_posix() if len(found) == 1 else ""


def definitions_to_merge(sent: dict[str, ast.stmt], top_level: set[str], existing: dict[str, ast.stmt],
                         target: str) -> dict[str, ast.stmt]:
    """A class the file has too merges method by method. With the target among them, only the target and
    names new to the file: weak models send the rest as stubs."""
    by_method = set()
    for name in top_level:
        if isinstance(sent[name], ast.ClassDef) and isinstance(existing.get(name), ast.ClassDef):
            by_method.add(name)
    chosen = {}
    for name, node in sent.items():
        in_merged_class = "." in name and name.split(".")[0] in by_method
        whole = name in top_level and name not in by_method
        if in_merged_class or whole:
            chosen[name] = node
    if target not in chosen:
        return chosen
    return {name: node for name, node in chosen.items() if name == target or name not in existing}


def place_of(name: str, existing: dict[str, ast.stmt]) -> str | None:
    """The definition `name` replaces: its own, else a method of that name (sent as a function)."""
    if name in existing:
        return name
    for existing_name in existing:
        if existing_name.endswith("." + name):
            return existing_name
    return None


def first_line(node: ast.stmt) -> int:
    """A definition's first line, its decorators included."""
    decorators = getattr(node, "decorator_list", [])
    return min([node.lineno] + [decorator.lineno for decorator in decorators])


def replace_definition(lines: list[str], old: ast.stmt, new_lines: list[str]) -> None:
    """`old`'s lines (decorators too) become `new_lines`, at `old`'s indent."""
    indent = indent_of(lines[old.lineno - 1])
    lines[first_line(old) - 1:old.end_lineno] = [indent + line if line else line for line in new_lines]


@dataclass
class SimilarLines:
    """The line of one file most like each sent line."""

    score: float  # their likeness, summed
    path: str
    lines: list[str]
    indexes: list[int]  # for each sent line, the line it replaces


def replace_similar_lines(workspace: Workspace, path: str, code: str) -> str | None:
    """A few lines, each like a line of one file (a def with a body: only if lines were asked for), replace
    those."""
    sent = [line.strip() for line in code.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    if not 0 < len(sent) <= MOST_LINES:
        return None
    if not workspace.asked_for_lines and DEF_WITH_BODY.search(code):
        return None
    files = [workspace.path(path)] if path else sorted(workspace.root.rglob("*.py"))
    found = []
    for file in files:
        similar = similar_lines(workspace, file, sent)
        if similar:
            found.append(similar)
    if not found:
        return None
    best = max(found, key=lambda similar: (similar.score, similar.path))
    lines = list(best.lines)
    for line, index in zip(sent, best.indexes):
        if not best.lines[index].strip().startswith(line):  # a prefix of its own line: a copy cut short, kept
            lines[index] = indent_of(best.lines[index]) + line
    return workspace.write(best.path, "\n".join(lines))


def similar_lines(workspace: Workspace, file: Path, sent: list[str]) -> SimilarLines | None:
    """Each sent line's most similar line in `file`, if each has its own and all are alike enough."""
    lines = file.read_text(errors="replace").splitlines() if file.is_file() else []
    matches = [most_similar(line, lines) for line in sent]
    ratios = [ratio for ratio, _ in matches]
    indexes = [index for _, index in matches]
    if min(ratios) < SIMILARITY or len(set(indexes)) != len(sent):
        return None
    return SimilarLines(sum(ratios), file.relative_to(workspace.root).as_posix(), lines, indexes)


def most_similar(line: str, lines: list[str]) -> tuple[float, int]:
    """(likeness, index) of the line most like `line`; on a tie, the later one."""
    candidates = enumerate(lines + [""])
    return max((SequenceMatcher(None, other.strip(), line).ratio(), index) for index, other in candidates)
