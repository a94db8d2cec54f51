"""What each command shows the model: the task and its files, the agent's own code, or how it failed."""
import re
from pathlib import Path

from agent import prompts
from agent.evidence import agent_map, evidence
from agent.loop import Agent

CONVERSATIONS = "conversations.jsonl"
SKIPPED = {".git", "__pycache__", ".pytest_cache", "node_modules", ".venv"}
TESTS = "python3 -m pytest -q -x -p no:cacheprovider"
TARGET = re.compile(r"(?m)^Target: \S+?:(\S+)$")


def files(root: Path, limit: int = 400) -> list[str]:
    """The repository's files, sorted, without version control and caches."""
    names = []
    for path in sorted(root.rglob("*")):
        relative = path.relative_to(root)
        if path.is_file() and not SKIPPED & set(relative.parts):
            names.append(relative.as_posix())
    return names[:limit]


def is_test(name: str) -> bool:
    return name.startswith("tests/") or "/tests/" in name or Path(name).name.startswith(("test_", "conftest"))


def check_command(root: Path, sources: list[str], tests: bool) -> str:
    """The repository's tests, else its docstring examples, else a compile: exit 0 means good."""
    examples = [name for name in sources if ">>>" in (root / name).read_text("utf-8", "replace")]
    if tests and examples:
        return TESTS + " --doctest-modules"
    if tests:
        return TESTS
    if examples:
        return "python3 -m doctest " + " ".join(examples[:5])
    return "python3 -m compileall -q ."


def solve(agent: Agent, problem: str, budget: int = 6000) -> str:
    """The file list, then (smallest first) the source files the problem names or that hold a stub."""
    root = agent.workspace.root
    names = files(root)
    sources = [name for name in names if name.endswith(".py") and not is_test(name)]
    shown = task_sources(root, sources, problem, budget)
    listing = prompts.LISTING.format(names="\n".join(names[:80]), sources="".join(shown))
    has_tests = any(is_test(name) and name.endswith(".py") for name in names)
    check = check_command(root, sources, has_tests)
    return agent.run(prompts.SOLVE.format(problem=problem.strip(), files=listing), check)


def task_sources(root: Path, sources: list[str], problem: str, budget: int) -> list[str]:
    """Those the problem names or that hold a stub, smallest first, while they fit in `budget`."""
    words = {word.strip(".") for word in re.findall(r"[\w./-]+", problem)}
    shown = []
    for name in sorted(sources, key=lambda name: (root / name).stat().st_size):
        text = (root / name).read_text("utf-8", "replace")
        wanted = name in words or Path(name).name in words or "NotImplementedError" in text
        if wanted and sum(map(len, shown)) + len(text) <= budget:
            shown.append(prompts.FILE.format(name=name, text=text.rstrip()))
    return shown


def improve(agent: Agent, instructions: str) -> str:
    """The instructions (with a target the engine adds its source and the map), else the files that fit;
    tests after each edit, until they pass."""
    root = agent.workspace.root
    names = files(root, 5000)
    asked_for_lines = "The lines that decide it" in instructions  # the engine showed those lines
    agent.workspace.asked_for_lines = asked_for_lines
    target = TARGET.search(instructions)
    agent.workspace.target = target[1] if target else ""
    if asked_for_lines or "(the target," in instructions:  # the engine showed the target's source
        budget = 0
    else:
        budget = agent.context_chars - len(instructions) - 1000
    agent.check = TESTS + " tests"
    agent.failing = True
    what = prompts.LINES if asked_for_lines else "it"
    sources = "".join(agent_sources(root, names, instructions, budget))
    task = prompts.IMPROVE.format(names="\n".join(names), sources=sources, problem=instructions.strip(),
                                  what=what)
    return agent.run(task, system=prompts.EDIT)


def agent_sources(root: Path, names: list[str], instructions: str, budget: int) -> list[str]:
    """The agent's files that fit in `budget`: those the instructions name first, evidence.py last."""
    code = [name for name in names if name.startswith("agent/") and name.endswith(".py")]
    shown = []

    def named_first(name: str) -> tuple:
        return Path(name).name not in instructions, name == "agent/evidence.py", name

    for name in sorted(code, key=named_first):
        text = (root / name).read_text("utf-8", "replace").rstrip()
        if sum(map(len, shown)) + len(text) <= budget:
            shown.append(prompts.FILE.format(name=name, text=text))
    return shown


def diagnose(agent: Agent, material: Path, out: Path) -> str:
    """The meta procedure: counted failures, the map, the material; one model call writes the instructions."""
    shown = []
    for name in files(material):
        if name != CONVERSATIONS:
            shown.append(prompts.FILE.format(name=name, text=(material / name).read_text(errors="replace")))
    own_map = agent_map(Path(__file__).parents[1])
    patterns = evidence(material / CONVERSATIONS)
    content = prompts.DIAGNOSE.format(patterns=patterns, map=own_map, material="".join(shown))
    agent.add({"role": "user", "content": content[:agent.context_chars * 3 // 4]})
    reply = agent.model.query(agent.messages)  # a ModelError ends it: exit 1
    out.write_text(reply["content"] or "")
    return "submitted"
