"""What `diagnose` computes before it asks the model: failure patterns counted from the conversations the
engine recorded (material/conversations.jsonl), each with its count, tasks, one excerpt and its usual fix,
and this agent's map (FILE:NAME and lines, as a diagnosis names its target)."""
import ast
import json
import re
from collections import defaultdict
from pathlib import Path

TOOL_ERROR = re.compile(r"(?m)^.*?(command not found|No such file or directory|Permission denied|\w+Error: .*)$")
SILENT = re.compile(r"(?:\A|->\n)\[exit code [1-9]\d*\]\Z")
FIXES = {
    "a reply cut off at the token limit": "ask for replies that hold a whole function (max_tokens of 1024 or more)",
    "a reply with no fenced block": "accept the reply form the model actually sends as an action",
    "a request that left out the previous step": "keep the latest steps in what is sent to the model",
    "a failing command shown with only its exit code": "show a command's error output (stderr) too",
    "the agent ran out of steps": "ask for the edit sooner, so the steps are not spent before a change",
    "the agent changed no file": "show the model the files the task names and ask for the edit",
    "no check ran: the model never saw the tests' result": "run the checks and show their result after each edit",
}


def occurrences(run: dict):
    """(pattern, excerpt) for each failure pattern of one recorded evaluation."""
    turns = [t for t in run.get("turns") or [] if isinstance(t, dict)]
    last, shown = (turns[-1].get("reply") or "") if turns else "", str(run.get("prompt") or "")
    if run.get("status") == "limits":
        yield "the agent ran out of steps", last
    if run.get("outcome") != "pass" and not run.get("edited"):
        yield "the agent changed no file", last
    if turns and "Checks: `" not in shown + "".join(t.get("output") or "" for t in turns):
        yield "no check ran: the model never saw the tests' result", shown
    for turn in turns:
        reply, output = turn.get("reply") or "", (turn.get("output") or "").strip()
        if turn.get("cut"):
            yield "a reply cut off at the token limit", reply[-100:]
        if "```" not in reply:
            yield "a reply with no fenced block", reply
        if turn.get("saw_previous") is False:
            yield "a request that left out the previous step", reply
        if SILENT.search(output):
            yield "a failing command shown with only its exit code", output[-100:]
        for line in dict.fromkeys(m[0].strip() for m in TOOL_ERROR.finditer(output)):
            yield f"tool error {json.dumps(line[:80])}", reply


def evidence(conversations: Path, limit: int = 8) -> str:
    """The patterns over every recorded evaluation, those touching the most tasks first."""
    runs = []
    for line in conversations.read_text(errors="replace").splitlines() if conversations.is_file() else []:
        try:
            runs.append(json.loads(line))
        except json.JSONDecodeError:
            continue  # a line cut at the file's size limit
    found: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for run in (r for r in runs if isinstance(r, dict)):
        for pattern, excerpt in occurrences(run):
            found[pattern].append((str(run.get("task")), " ".join(excerpt.split())[:160]))
    failed = sum(isinstance(r, dict) and r.get("outcome") != "pass" for r in runs)
    lines = [f"Failure patterns, counted by the agent's own code over {len(runs)} evaluations ({failed} failed):"]
    ranked = sorted(found.items(), key=lambda item: (-len({t for t, _ in item[1]}), -len(item[1]), item[0]))
    for number, (pattern, hits) in enumerate(ranked[:limit], 1):
        tasks = list(dict.fromkeys(t for t, _ in hits))
        lines.append(f"{number}. {pattern}: {len(hits)} times in {len(tasks)} tasks ({', '.join(tasks[:4])})")
        lines.append(f"   e.g. {json.dumps(next((e for _, e in hits if e), ''))}")
        lines += [f"   usual fix: {FIXES[pattern]}"] if pattern in FIXES else []
    return "\n".join(lines if found else [*lines, "- none found"])


def agent_map(root: Path) -> str:
    """The agent's files and what each defines: `FILE:NAME  [lines A-B]`, constants too."""
    lines = []
    for path in sorted(root.glob("agent/*.py")):
        name, text = path.relative_to(root).as_posix(), path.read_text()
        lines.append(f"{name} ({len(text.splitlines())} lines)")
        for node in ast.parse(text).body:
            if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
                lines.append(f"  {name}:{node.targets[0].id} (constant)  [line {node.lineno}]")
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                lines.append(f"  {name}:{node.name}  [lines {node.lineno}-{node.end_lineno}]")
                methods = [m for m in node.body if isinstance(m, ast.FunctionDef)] if isinstance(node, ast.ClassDef) else []
                lines += [f"  {name}:{node.name}.{m.name}  [lines {m.lineno}-{m.end_lineno}]" for m in methods]
    return "\n".join(lines)
