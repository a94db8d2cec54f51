"""What the model sees up front: the repository's files, the relevant ones in full, and how to check work."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

SKIP_DIRS = {".git", "__pycache__", ".pytest_cache", "node_modules", ".venv", "venv"}
SOURCE_SUFFIXES = {".py", ".toml", ".cfg", ".txt", ".md", ".json", ".ini", ".yaml", ".yml", ".sh"}


@dataclass(frozen=True)
class RepoView:
    files: list[str]  # every file, relative
    shown: list[str]  # files whose content goes into the first prompt, most relevant first
    check_command: str  # how to check work: visible tests, doctests, or a compile


def list_files(root: Path, limit: int = 400) -> list[str]:
    found: list[str] = []
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if any(part in SKIP_DIRS or part.startswith(".") for part in rel.parts) or not path.is_file():
            continue
        found.append(rel.as_posix())
        if len(found) >= limit:
            break
    return found


def is_test(name: str) -> bool:
    base = name.rsplit("/", 1)[-1]
    return name.startswith("tests/") or "/tests/" in name or base.startswith("test_") or base == "conftest.py"


def relevance(name: str, text: str, problem: str) -> int:
    base = name.rsplit("/", 1)[-1]
    stem = base.rsplit(".", 1)[0]
    score = 0
    if name in problem or base in problem:
        score += 10
    if re.search(rf"\b{re.escape(stem)}\b", problem):
        score += 4
    if "NotImplementedError" in text or "TODO" in text:
        score += 6
    words = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]{2,}", problem))
    defined = set(re.findall(r"^\s*(?:def|class)\s+(\w+)", text, re.MULTILINE))
    score += 3 * len(words & defined)
    code_words = {w for span in re.findall(r"`([^`]+)`", problem) for w in re.findall(r"[A-Za-z_]\w{2,}", span)}
    score += min(4, sum(1 for w in code_words if w in text))
    if is_test(name):
        score -= 3
    if base == "__init__.py":
        score -= 2
    return score


def view_repo(root: Path, problem: str, budget_chars: int = 4000) -> RepoView:
    """Show the relevant files in full (most relevant first, within `budget_chars`), the rest by name."""
    files = list_files(root)
    texts = {f: (root / f).read_text(errors="replace") for f in files if Path(f).suffix in SOURCE_SUFFIXES
             and (root / f).stat().st_size < 50_000}
    scores = {f: relevance(f, texts[f], problem) for f in texts}
    ranked = sorted(texts, key=lambda f: (-scores[f], f))
    shown: list[str] = []
    used = 0
    for name in ranked:
        if not name.endswith(".py") and scores[name] < 10:
            continue  # docs and data only when the task names them
        if shown and scores[name] < 3:
            break  # only clearly relevant files beyond the first: short prompts for slow small models
        if used + len(texts[name]) > budget_chars and shown:
            continue
        shown.append(name)
        used += len(texts[name])
    return RepoView(files=files, shown=shown, check_command=check_command(files, texts))


def check_command(files: list[str], texts: dict[str, str]) -> str:
    doctested = [f for f in files if f.endswith(".py") and ">>>" in texts.get(f, "") and not is_test(f)]
    if any(is_test(f) and f.endswith(".py") for f in files):
        # the docstrings' examples are checks too: they fail on a stub and pass on a good implementation
        doctests = " --doctest-modules" if doctested else ""
        return f"PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 python3 -m pytest -q -x -p no:cacheprovider{doctests}"
    if doctested:
        return "python3 -m doctest " + " ".join(doctested[:5])
    return "python3 -m compileall -q ."


def render_files(root: Path, view: RepoView) -> str:
    parts = [f"Files in the repository:\n{chr(10).join(view.files[:80])}"]
    for name in view.shown:
        parts.append(f"--- {name} ---\n{(root / name).read_text(errors='replace').rstrip()}")
    return "\n\n".join(parts)


def view_self(root: Path, instructions: str, budget_chars: int = 3500) -> RepoView:
    """What `improve` shows up front: the agent files the instructions name, while they fit in
    `budget_chars`; when none is named or fits, agent/prompts.py (the agent's words to the model, the
    cheapest place to change how it behaves). Small models edit one short file far better than many."""
    files = list_files(root)
    texts = {f: (root / f).read_text(errors="replace") for f in files if f.endswith(".py")}
    named = [f for f in texts if not is_test(f) and f.rsplit("/", 1)[-1] != "__init__.py"
             and re.search(rf"(?<![\w/]){re.escape(f.rsplit('/', 1)[-1])}\b", instructions)]
    shown: list[str] = []
    for name in sorted(named, key=lambda f: len(texts[f])):
        if sum(len(texts[f]) for f in shown) + len(texts[name]) <= budget_chars:
            shown.append(name)
    if not shown and "agent/prompts.py" in texts:
        shown = ["agent/prompts.py"]
    return RepoView(files=files, shown=shown, check_command=check_command(files, texts))
