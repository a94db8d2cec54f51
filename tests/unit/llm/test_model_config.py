"""The [models.<role>] keys: prices for unknown hosted models, the retry window against the
agent's wait, and the seed agent's timeout above the gateway's longest call."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from evolve.config import ConfigError, parse_config
from evolve.llm.client import OpenAIModel
from evolve.models.capabilities import AGENT_WAIT_S, capabilities, worst_case_s

SEED_MODEL = Path(__file__).resolve().parents[3] / "evolve" / "seed" / "agent" / "model.py"


def _solve(lines: str, budget: str = "") -> str:
    return f'[models.solve]\nprovider = "openai"\n{lines}\n{budget}'


def test_an_unknown_hosted_model_is_refused_under_a_dollar_budget_unless_priced():
    unknown = 'model = "gpt-9-turbo"'
    with pytest.raises(ConfigError, match="no price known for 'gpt-9-turbo'"):
        parse_config(_solve(unknown, "[budget]\ndollars = 5.0"))
    parse_config(_solve(unknown))  # no dollar budget: allowed (the client warns)
    priced = parse_config(
        _solve(
            unknown + "\nprice_input_per_mtok = 1.0\nprice_output_per_mtok = 4.0", "[budget]\ndollars = 5.0"
        )
    )
    assert priced.models.solve.price().cost(1_000_000, 1_000_000) == 5.0
    parse_config(_solve('model = "o3-mini-2025-01-31"', "[budget]\ndollars = 5.0"))  # in the table


def test_half_a_price_is_an_error():
    with pytest.raises(ConfigError, match="give both"):
        parse_config(_solve('model = "x"\nprice_input_per_mtok = 1.0'))


def test_an_unknown_hosted_model_warns(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with pytest.warns(UserWarning, match="no price known for hosted model 'gpt-9-turbo'"):
        OpenAIModel("gpt-9-turbo")


def test_a_retry_window_longer_than_the_agent_waits_is_refused():
    with pytest.raises(ConfigError, match="exceeds the agent's wait"):
        parse_config(_solve('model = "o1"\nretry_window_min = 25'))
    parse_config(_solve('model = "o1"\nretry_window_min = 20'))  # 1200 + 600 s fits


def test_the_seed_agent_waits_longer_than_the_gateways_longest_call():
    tree = ast.parse(SEED_MODEL.read_text())
    fields = {
        target.id: ast.literal_eval(node.value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and isinstance(node.value, ast.Constant)
        for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
        if isinstance(target, ast.Name)
    }
    assert fields["timeout"] > AGENT_WAIT_S
    default = worst_case_s(10 * 60, capabilities("openai", "o1").default_timeout_s)
    assert default <= AGENT_WAIT_S
