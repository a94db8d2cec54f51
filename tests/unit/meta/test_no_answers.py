"""The engine knows no answers: nothing in `evolve/` outside the seed names the bundled seed's files,
functions, classes, methods or constants, quotes its distinctive texts, or sets its request parameters'
values.

Whatever the seed is when the test runs, its identifiers are derived from its syntax trees
(`evolve/seed/agent`):
- its files, as `agent/<file>.py` (the contract's `__main__.py` and `__init__.py` aside);
- the names it defines (functions, classes, methods, module constants) that are not one plain word
  (`check_command`; `parse` or `SYSTEM` are English, not the seed's) nor the engine's own (a name the engine
  defines for itself, such as `ModelError`, is its word), and every `Class.method` it defines (`Agent.run`);
- its distinctive texts: each run of five words or more of its module constants' strings;
- the values it sends or sizes things with (`"max_tokens": 1024` in its request body, `context_chars=26000`),
  where the name and the value occur together in one line or string of the meta step.

Two packages are left out of the scan: `evolve/bench` (the self-repair bench plants defects in the seed, so it
must name them) and `evolve/standins` (the package's test stand-ins, which imitate the seed's contract).
Knowledge about one agent belongs to that agent (its code, or its `profile.toml`), where evolution can change
it.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

import evolve
from evolve.seed import seed_dir

ENGINE = Path(evolve.__file__).parent
EXCLUDED = ("seed", "bench", "standins")
CONTRACT_FILES = frozenset({"__main__", "__init__"})
MIN_WORDS = 5
_WORD = re.compile(r"^_*(?:[A-Z]?[a-z]+|[A-Z]+|[a-z]+)\d*$")
"""One plain word (`parse`, `Agent`, `SYSTEM`): generic English, not an identifier only the seed has."""


def _seed_trees() -> dict[str, ast.Module]:
    return {path.stem: ast.parse(path.read_text()) for path in sorted((seed_dir() / "agent").glob("*.py"))}


def _named_literals(tree: ast.Module) -> list[tuple[str, object]]:
    """(name, value) of the values the seed sends or sizes things with: every literal entry of a request body
    (a dict with a `messages` key), and integer literals of two or more given a name of several words (a
    dict entry, keyword argument or parameter default such as `context_chars=26000`). A value given a
    one-word name (`timeout=120`) or a float (a temperature) is anyone's."""
    pairs: list[tuple[str, ast.expr, bool]] = []  # (name, value, in a request body)
    for node in ast.walk(tree):
        if isinstance(node, ast.Dict):
            keys = [
                k.value if isinstance(k, ast.Constant) and isinstance(k.value, str) else "" for k in node.keys
            ]
            pairs += [(k, v, "messages" in keys) for k, v in zip(keys, node.values) if k]
        elif isinstance(node, ast.Call):
            pairs += [(k.arg, k.value, False) for k in node.keywords if k.arg]
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            positional = [*node.args.posonlyargs, *node.args.args]
            pairs += [
                (a.arg, d, False)
                for a, d in zip(positional[len(positional) - len(node.args.defaults) :], node.args.defaults)
            ]
            pairs += [
                (a.arg, d, False)
                for a, d in zip(node.args.kwonlyargs, node.args.kw_defaults)
                if d is not None
            ]
    found: list[tuple[str, object]] = []
    for name, value, body in pairs:
        literal = (
            value.value if isinstance(value, ast.Constant) and not isinstance(value.value, bool) else None
        )
        sized = isinstance(literal, int) and literal >= 2 and (body or "_" in name.strip("_"))
        if sized or (body and isinstance(literal, str) and len(literal.strip()) >= 12):
            found.append((name, literal))
    return found


@dataclass(frozen=True)
class Identifiers:
    patterns: list[re.Pattern[str]]
    """The seed's file paths, names and `Class.method`s, as patterns."""
    texts: list[str]
    """Runs of MIN_WORDS words or more of its constants' strings."""
    values: list[tuple[str, str]]
    """(name, value) it sends or sizes things with."""


@pytest.fixture(scope="module")
def seed() -> Identifiers:
    return seed_identifiers()


@pytest.fixture(scope="module")
def units() -> list[tuple[str, str]]:
    return engine_units()


def seed_identifiers() -> Identifiers:
    """The seed's identifiers, derived from its code."""
    names: set[str] = set()
    texts: list[str] = []
    values: list[tuple[str, str]] = []
    trees = _seed_trees()
    patterns = [
        re.compile(rf"\bagent/{re.escape(stem)}\.py\b") for stem in trees if stem not in CONTRACT_FILES
    ]
    for tree in trees.values():
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(node.name)
                if isinstance(node, ast.ClassDef):
                    for item in node.body:
                        if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                            names.add(item.name)
                            patterns.append(
                                re.compile(rf"\b{re.escape(node.name)}\.{re.escape(item.name)}\b")
                            )
            elif isinstance(node, ast.Assign):
                for target in node.targets:
                    if isinstance(target, ast.Name):
                        names.add(target.id)
                        if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
                            words = re.split(r"\{[^{}]*\}|\n\s*\n", node.value.value)
                            texts += [
                                " ".join(part.split()) for part in words if len(part.split()) >= MIN_WORDS
                            ]
        values += [(name, str(value)) for name, value in _named_literals(tree)]
    own = engine_definitions()
    patterns += [
        re.compile(rf"(?<![\w.]){re.escape(name)}\b")
        for name in sorted(names)
        if not _WORD.match(name) and not name.startswith("__") and name not in own
    ]
    return Identifiers(patterns, texts, sorted(set(values)))


def engine_definitions() -> set[str]:
    """The names the engine defines itself (outside EXCLUDED): its own words, whichever the seed also uses
    (`ModelError`, `agent_map`)."""
    names = set()
    for path in _engine_files(".py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(node.name)
            elif isinstance(node, ast.Assign):
                names.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return names


def _engine_files(*suffixes: str) -> list[Path]:
    return [
        path
        for path in sorted(ENGINE.rglob("*"))
        if path.is_file() and path.suffix in suffixes and path.relative_to(ENGINE).parts[0] not in EXCLUDED
    ]


def engine_units() -> list[tuple[str, str]]:
    """(where, text) of every line and every string constant (implicit concatenation joined) of the engine's
    files outside EXCLUDED."""
    units = []
    for path in _engine_files(".py", ".toml", ".md"):
        relative = path.relative_to(ENGINE)
        text = path.read_text()
        units += [(f"evolve/{relative}:{number}", line) for number, line in enumerate(text.splitlines(), 1)]
        if path.suffix == ".py":
            units += [
                (f"evolve/{relative}:{node.lineno}", node.value)
                for node in ast.walk(ast.parse(text))
                if isinstance(node, ast.Constant) and isinstance(node.value, str) and "\n" in node.value
            ]
    return units


def test_the_engine_outside_the_seed_names_none_of_the_seeds_identifiers(
    seed: Identifiers, units: list[tuple[str, str]]
) -> None:
    assert len(seed.patterns) > 10, "the seed's identifiers could not be derived"
    found = sorted(
        {
            f"{where}: {pattern.pattern}"
            for where, text in units
            for pattern in seed.patterns
            if pattern.search(text)
        }
    )
    assert found == [], "the engine names the seed's own files or identifiers:\n" + "\n".join(found)


def test_the_engine_quotes_none_of_the_seeds_texts(seed: Identifiers, units: list[tuple[str, str]]) -> None:
    assert seed.texts, "the seed's texts could not be derived"
    flat = [(where, " ".join(text.split())) for where, text in units]
    found = sorted(
        {f"{where}: {quote[:60]!r}" for quote in seed.texts for where, text in flat if quote in text}
    )
    assert found == [], "the engine quotes the seed's texts:\n" + "\n".join(found)


def test_the_meta_step_sets_none_of_the_seeds_values(seed: Identifiers, units: list[tuple[str, str]]) -> None:
    """Values only in the meta step (evolve/meta, evolve/engine): the model clients (evolve/llm) and configs
    carry the protocol's common defaults, such as a 1024-token cap, which any agent may share."""
    meta = [(where, text) for where, text in units if where.startswith(("evolve/meta/", "evolve/engine/"))]
    found = sorted(
        {
            f"{where}: {name} = {value!r}"
            for name, value in seed.values
            for where, text in meta
            if value in text
            and re.search(rf"\b{re.escape(name)}\b", text)
            and re.search(rf"(?<![\w.]){re.escape(value)}(?![\w]|\.\d)", text)
        }
    )
    assert found == [], "the engine sets the seed's values:\n" + "\n".join(found)


@pytest.mark.parametrize(
    "written, caught",
    [
        ('TARGET = "agent/loop.py:Agent.run"', True),
        ("Use check_command.", True),
        ('FIX = "max_tokens of 1024 or more"', True),
        ("Parse the reply and run the agent.", False),
    ],
)
def test_the_rule_catches_a_table_keyed_to_the_seed(seed: Identifiers, written: str, caught: bool) -> None:
    named = any(p.search(written) for p in seed.patterns) or any(
        re.search(rf"\b{re.escape(n)}\b", written) and re.search(rf"(?<![\w.]){re.escape(v)}\b", written)
        for n, v in seed.values
    )
    assert named is caught
