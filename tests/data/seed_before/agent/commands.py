"""What each command shows the model: the task and its files, the agent's own code, or how it failed."""
import re
from pathlib import Path

from agent.evidence import agent_map, evidence
from agent.loop import Agent, prompts

CONVERSATIONS = "conversations.jsonl"


def files(root: Path, limit: int = 400) -> list[str]:
    skip = {".git", "__pycache__", ".pytest_cache", "node_modules", ".venv"}
    return [p.relative_to(root).as_posix() for p in sorted(root.rglob("*"))
            if p.is_file() and not skip & set(p.relative_to(root).parts)][:limit]


def is_test(name: str) -> bool:
    return name.startswith("tests/") or "/tests/" in name or Path(name).name.startswith(("test_", "conftest"))


def check_command(root: Path, sources: list[str], tests: bool) -> str:
    """The repository's tests, else its docstring examples, else a compile: exit 0 means good."""
    examples = [n for n in sources if ">>>" in (root / n).read_text("utf-8", "replace")]
    if tests:
        return "python3 -m pytest -q -x -p no:cacheprovider" + (" --doctest-modules" if examples else "")
    return "python3 -m doctest " + " ".join(examples[:5]) if examples else "python3 -m compileall -q ."


def solve(agent: Agent, problem: str, budget: int = 6000) -> str:
    """The file list, then (smallest first) the source files the problem names or that hold a stub."""
    root, names, shown = agent.workspace.root, files(agent.workspace.root), []
    words = {word.strip(".") for word in re.findall(r"[\w./-]+", problem)}
    sources = [n for n in names if n.endswith(".py") and not is_test(n)]
    for name in sorted(sources, key=lambda n: (root / n).stat().st_size):
        text = (root / name).read_text("utf-8", "replace")
        wanted = name in words or Path(name).name in words or "NotImplementedError" in text
        if wanted and sum(map(len, shown)) + len(text) <= budget:
            shown.append(f"\n\n--- {name} ---\n{text.rstrip()}")
    listing = "Files in the repository:\n" + "\n".join(names[:80]) + "".join(shown)
    check = check_command(root, sources, any(is_test(n) and n.endswith(".py") for n in names))
    return agent.run(prompts.SOLVE.format(problem=problem.strip(), files=listing), check)


def improve(agent: Agent, instructions: str) -> str:
    """The instructions (with a target the engine adds its source and the map), else the files that fit
    (named first, evidence.py last); tests after each edit, until they pass."""
    root, parts, names = agent.workspace.root, [], files(agent.workspace.root, 5000)
    agent.workspace.lines = lines = "The lines that decide it" in instructions  # the engine showed those lines
    agent.workspace.target = (re.findall(r"(?m)^Target: \S+?:(\S+)$", instructions) + [""])[0]
    budget = 0 if lines or "(the target," in instructions else agent.context_chars - len(instructions) - 1000
    for name in sorted((n for n in names if n.startswith("agent/") and n.endswith(".py")),
                       key=lambda n: (Path(n).name not in instructions, n == "agent/evidence.py", n)):
        text = (root / name).read_text("utf-8", "replace").rstrip()
        if sum(map(len, parts)) + len(text) <= budget:
            parts.append(f"\n\n--- {name} ---\n{text}")
    agent.check, agent.failing = "python3 -m pytest -q -x -p no:cacheprovider tests", True  # passing ends it
    shown = "Files:\n" + "\n".join(names) + "".join(parts)
    it = prompts.LINES if lines else "it"
    return agent.run(prompts.IMPROVE.format(files=shown, problem=instructions.strip(), it=it), system=prompts.EDIT)


def diagnose(agent: Agent, material: Path, out: Path) -> str:
    """The meta procedure: counted failures, the map, the material; one model call writes improve's instructions."""
    computed = evidence(material / CONVERSATIONS) + "\n\nThe agent's map:\n" + agent_map(Path(__file__).parents[1])
    shown = "".join(f"\n\n--- {n} ---\n{(material / n).read_text(errors='replace')}" for n in files(material)
                    if n != CONVERSATIONS)
    agent.add({"role": "user", "content": (prompts.DIAGNOSE + computed + shown)[:agent.context_chars * 3 // 4]})
    out.write_text(agent.model.query(agent.messages)["content"] or "")  # a ModelError ends it: exit 1
    return "submitted"
