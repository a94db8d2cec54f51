"""What `diagnose` computes before it asks the model: failure patterns counted from the conversations the
engine recorded (material/conversations.jsonl), each with its count, tasks, one excerpt and its usual fix,
and this agent's map (FILE:NAME and lines, as a diagnosis names its target)."""
import ast
import json
import re
from collections import defaultdict
from pathlib import Path

TOOL_ERROR = re.compile(r"(?m)^.*?(command not found|No such file or directory|Permission denied"
                        r"|\w+Error: .*)$")
SILENT = re.compile(r"(?:\A|->\n)\[exit code [1-9]\d*\]\Z")
FIXES = {
    "a reply cut off at the token limit":
        "ask for replies that hold a whole function (max_tokens of 1024 or more)",
    "a reply with no fenced block": "accept the reply form the model actually sends as an action",
    "a request that left out the previous step": "keep the latest steps in what is sent to the model",
    "a failing command shown with only its exit code": "show a command's error output (stderr) too",
    "the agent ran out of steps": "ask for the edit sooner, so the steps are not spent before a change",
    "the agent changed no file": "show the model the files the task names and ask for the edit",
    "no check ran: the model never saw the tests' result":
        "run the checks and show their result after each edit",
}


def occurrences(run: dict):
    """(pattern, excerpt) for each failure pattern of one recorded evaluation."""
    turns = [turn for turn in run.get("turns") or [] if isinstance(turn, dict)]
    last_reply = ""
    if turns:
        last_reply = turns[-1].get("reply") or ""
    prompt = str(run.get("prompt") or "")
    if run.get("status") == "limits":
        yield "the agent ran out of steps", last_reply
    if run.get("outcome") != "pass" and not run.get("edited"):
        yield "the agent changed no file", last_reply
    outputs = "".join(turn.get("output") or "" for turn in turns)
    if turns and "Checks: `" not in prompt + outputs:
        yield "no check ran: the model never saw the tests' result", prompt
    for turn in turns:
        yield from turn_occurrences(turn)


def turn_occurrences(turn: dict):
    """(pattern, excerpt) for each failure pattern of one step."""
    reply = turn.get("reply") or ""
    output = (turn.get("output") or "").strip()
    if turn.get("cut"):
        yield "a reply cut off at the token limit", reply[-100:]
    if "```" not in reply:
        yield "a reply with no fenced block", reply
    if turn.get("saw_previous") is False:
        yield "a request that left out the previous step", reply
    if SILENT.search(output):
        yield "a failing command shown with only its exit code", output[-100:]
    for line in dict.fromkeys(match[0].strip() for match in TOOL_ERROR.finditer(output)):
        yield f"tool error {json.dumps(line[:80])}", reply


def evidence(conversations: Path, limit: int = 8) -> str:
    """The patterns over every recorded evaluation, those touching the most tasks first."""
    runs = recorded_runs(conversations)
    found: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for run in runs:
        if not isinstance(run, dict):
            continue
        for pattern, excerpt in occurrences(run):
            excerpt = " ".join(excerpt.split())[:160]
            found[pattern].append((str(run.get("task")), excerpt))
    failed = sum(isinstance(run, dict) and run.get("outcome") != "pass" for run in runs)
    counted = f"over {len(runs)} evaluations ({failed} failed)"
    lines = [f"Failure patterns, counted by the agent's own code {counted}:"]
    ranked = sorted(found.items(), key=most_tasks_first)
    for number, (pattern, hits) in enumerate(ranked[:limit], 1):
        lines += described(number, pattern, hits)
    if not found:
        lines.append("- none found")
    return "\n".join(lines)


def most_tasks_first(item: tuple[str, list[tuple[str, str]]]) -> tuple:
    """Sort key of a pattern and its hits: the most tasks first, then the most hits, then by name."""
    pattern, hits = item
    return -len({task for task, _ in hits}), -len(hits), pattern


def recorded_runs(conversations: Path) -> list:
    """One JSON value a line; a line cut at the file's size limit is left out."""
    if not conversations.is_file():
        return []
    runs = []
    for line in conversations.read_text(errors="replace").splitlines():
        try:
            runs.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return runs


def described(number: int, pattern: str, hits: list[tuple[str, str]]) -> list[str]:
    """A pattern's lines: its count and tasks, an example, its usual fix."""
    tasks = list(dict.fromkeys(task for task, _ in hits))
    example = next((excerpt for _, excerpt in hits if excerpt), "")
    lines = [f"{number}. {pattern}: {len(hits)} times in {len(tasks)} tasks ({', '.join(tasks[:4])})",
             f"   e.g. {json.dumps(example)}"]
    if pattern in FIXES:
        lines.append(f"   usual fix: {FIXES[pattern]}")
    return lines


def agent_map(root: Path) -> str:
    """The agent's files and what each defines: `FILE:NAME  [lines A-B]`, constants too."""
    lines = []
    for path in sorted(root.glob("agent/*.py")):
        name = path.relative_to(root).as_posix()
        text = path.read_text()
        lines.append(f"{name} ({len(text.splitlines())} lines)")
        for node in ast.parse(text).body:
            lines += map_entries(name, node)
    return "\n".join(lines)


def map_entries(name: str, node: ast.stmt) -> list[str]:
    """The map's lines for one top-level statement: a constant, or a function or class and its methods."""
    if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
        return [f"  {name}:{node.targets[0].id} (constant)  [line {node.lineno}]"]
    if not isinstance(node, (ast.FunctionDef, ast.ClassDef)):
        return []
    entries = [f"  {name}:{node.name}  [lines {node.lineno}-{node.end_lineno}]"]
    if isinstance(node, ast.ClassDef):
        for method in node.body:
            if isinstance(method, ast.FunctionDef):
                lines = f"[lines {method.lineno}-{method.end_lineno}]"
                entries.append(f"  {name}:{node.name}.{method.name}  {lines}")
    return entries
