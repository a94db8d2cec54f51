from __future__ import annotations

from pathlib import Path

import pytest

from evolve.meta.agentmap import agent_map, file_map, source_of
from evolve.seed import copy_seed

TOOLS = '''"""Tools."""
import subprocess

TIMEOUT = 60
_LIMIT: int = 4000
helper = 3


def cap(text, limit=4000):
    """Cut text.

    More words."""
    return text[:limit]


class Workspace:
    """The hands."""

    def __init__(self, root):
        self.root = root

    @staticmethod
    def run_bash(command, *, timeout=None, **options):
        return subprocess.run(["bash", "-c", command])
'''


@pytest.fixture
def agent(tmp_path: Path) -> Path:
    root = tmp_path / "agent-root"
    (root / "agent").mkdir(parents=True)
    (root / "tests").mkdir()
    (root / "agent" / "tools.py").write_text(TOOLS)
    (root / "agent" / "prompts.py").write_text(
        'SYSTEM = """one\ntwo"""\nSOLVE = "{problem}"\nSYSTEM += "\\nLesson: x"\n'
    )
    (root / "agent" / "broken.py").write_text("def f(:\n")
    (root / "tests" / "test_tools.py").write_text("def test_cap():\n    pass\n")
    (root / "agent" / "__pycache__").mkdir()
    (root / "agent" / "__pycache__" / "junk.py").write_text("X = 1\n")
    return root


def test_map_lists_agent_files_and_symbols_with_line_ranges(agent: Path) -> None:
    found = agent_map(agent)
    assert [f.path for f in found.files] == ["agent/broken.py", "agent/prompts.py", "agent/tools.py"]
    tools = {s.name: s for s in found.files[2].symbols}
    assert list(tools) == [
        "TIMEOUT",
        "_LIMIT",
        "cap",
        "Workspace",
        "Workspace.__init__",
        "Workspace.run_bash",
    ]
    assert (tools["cap"].kind, tools["cap"].start, tools["cap"].end) == ("function", 9, 13)
    assert tools["cap"].summary == "Cut text."
    assert (tools["Workspace"].start, tools["Workspace"].end) == (16, 24)
    run_bash = tools["Workspace.run_bash"]
    assert (run_bash.kind, run_bash.start, run_bash.signature) == (
        "method",
        22,
        "command, *, timeout, **options",
    )
    assert tools["Workspace.__init__"].signature == "root"
    assert "helper" not in tools  # lower-case module variables are not constants


def test_a_file_that_does_not_parse_is_listed_with_why(agent: Path) -> None:
    broken = agent_map(agent).files[0]
    assert broken.symbols == () and "does not parse (line 1" in broken.error
    assert "agent/broken.py (1 lines): does not parse" in agent_map(agent).render()


def test_render_is_compact_and_bounded(agent: Path) -> None:
    text = agent_map(agent).render()
    assert "  def cap(text, limit)  [lines 9-13]  Cut text." in text
    assert "    def run_bash(command, *, timeout, **options)  [lines 22-24]" in text
    assert "  SOLVE  [line 3]" in text
    assert "Cut text." not in agent_map(agent).render(summaries=False)
    qualified = agent_map(agent).render(qualified=True)
    assert "  agent/tools.py:Workspace.run_bash(command, *, timeout, **options)  [lines 22-24]" in qualified
    assert "  agent/prompts.py:SOLVE (constant)  [line 3]" in qualified
    short = agent_map(agent).render(limit=80)
    assert len(short) <= 80 + len("\n[... map cut]") and short.endswith("[... map cut]")


@pytest.mark.parametrize(
    ("written", "canonical"),
    [
        ("agent/tools.py:cap", "agent/tools.py:cap"),
        ("tools.py:cap", "agent/tools.py:cap"),
        ("agent/tools.py::Workspace.run_bash", "agent/tools.py:Workspace.run_bash"),
        ("agent.tools.Workspace.run_bash", "agent/tools.py:Workspace.run_bash"),
        ("`cap()`", "agent/tools.py:cap"),
        ("Workspace.run_bash", "agent/tools.py:Workspace.run_bash"),
        ("SOLVE", "agent/prompts.py:SOLVE"),
        ("below_zero", None),  # task code: not in the map
        ("run_bash", None),  # a method is named with its class
        ("agent/tools.py", None),  # a file with several symbols is no single target
        ("tests/test_tools.py:test_cap", None),  # tests are not the agent
        ("", None),
    ],
)
def test_resolve_accepts_loose_names_and_refuses_what_is_not_in_the_map(
    agent: Path, written: str, canonical: str | None
) -> None:
    assert agent_map(agent).resolve(written) == canonical


def test_source_of_returns_the_lines_of_the_target(agent: Path) -> None:
    assert source_of(agent, "agent/prompts.py:SYSTEM") == 'SYSTEM = """one\ntwo"""\n'
    assert source_of(agent, "agent/tools.py:Workspace.run_bash").startswith(
        "    @staticmethod\n    def run_bash("
    )
    assert source_of(agent, "agent/tools.py:cap").endswith("    return text[:limit]\n")
    with pytest.raises(KeyError, match="below_zero"):
        source_of(agent, "below_zero")


def test_the_seed_agent_maps_with_every_file_parsed(tmp_path: Path) -> None:
    copy_seed(tmp_path / "seed")
    found = agent_map(tmp_path / "seed")
    assert "agent/__init__.py" in found.render() and "agent/__init__.py" not in found.render(qualified=True)
    assert all(not f.error for f in found.files) and "agent/loop.py:Agent.run" in found.targets()
    assert "agent/prompts.py:SYSTEM" in found.targets()
    assert source_of(tmp_path / "seed", "agent/loop.py:parse").startswith(
        "def parse(text: str, editing: bool = False)"
    )


def test_file_map_of_a_duplicate_constant_keeps_the_first_definition() -> None:
    mapped = file_map("agent/prompts.py", "SYSTEM = 'a'\nSYSTEM = 'b'\n")
    assert [(s.name, s.start) for s in mapped.symbols] == [("SYSTEM", 1)]


@pytest.mark.parametrize(
    "source", ["x = " + "-" * 300_000 + "1\n", "X = 1\x00\n", "x = " + "(" * 500 + ")" * 500 + "\n"]
)
def test_a_file_the_parser_cannot_take_is_mapped_as_not_parsing(source: str) -> None:
    """Agent-written code read on the host: nesting too deep or a null byte is one more file that does not
    parse."""
    mapped = file_map("agent/bad.py", source)
    assert mapped.symbols == () and mapped.error.startswith("does not parse")
