"""The "Bring your own agent" page holds: it is in the site, the agent it shows meets the contract's layout,
the commands it shows are the ones the docker-tier test runs, its config parses, and every environment
variable it names is one the engine sets."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from evolve.config import parse_config
from evolve.seed import agent_problem

ROOT = Path(__file__).parents[3]
PAGE = (ROOT / "docs" / "byoa.md").read_text()


def page_commands() -> list[list[str]]:
    """The page's shell commands, as words (tests/integration/docs/test_byoa_commands.py runs them)."""
    blocks = re.findall(r"```bash\n(.*?)```", PAGE, re.DOTALL)
    return [shlex.split(line) for block in blocks for line in block.splitlines() if line.strip()]


def test_the_page_is_in_the_site():
    assert "byoa.md" in (ROOT / "mkdocs.yml").read_text()


def test_every_command_checks_a_directory_that_meets_the_contract_s_layout_and_is_not_the_seed():
    commands = page_commands()
    assert commands
    for words in commands:
        assert words[:3] == ["evolve", "agent", "check"] and "--scripted" in words, words
        agent = ROOT / words[3]
        assert agent_problem(agent) is None
        assert "evolve/seed" not in words[3] and (agent / "tests").is_dir()


def test_the_page_s_config_parses_and_names_the_example_agent():
    (toml,) = re.findall(r"```toml\n(.*?)```", PAGE, re.DOTALL)
    config = parse_config(toml)
    assert config.seed.path is not None and agent_problem(ROOT / config.seed.path) is None
    assert str(config.seed.path) == page_commands()[0][3]


def test_every_environment_variable_the_page_names_is_one_the_engine_sets():
    source = "".join(p.read_text() for p in (ROOT / "evolve").rglob("*.py") if "seed" not in p.parts)
    named = set(re.findall(r"`(EVOLVE_[A-Z_]+)`", PAGE))
    assert {"EVOLVE_LLM_SOCKET", "EVOLVE_TRANSCRIPT"} <= named
    for variable in named:
        assert f'"{variable}"' in source, variable
