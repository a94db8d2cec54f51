"""The policy parameters are defined once: the run config's [policy] sections load into them."""

from __future__ import annotations

import pytest

from evolve.config import ConfigError, parse_config
from evolve.search import DGMParams, HGMParams, StagedParams


def test_the_config_policy_sections_are_the_policies_own_classes():
    policy = parse_config("[policy.hgm]\nalpha = 0.5\n\n[policy.dgm]\nlam = 4.0\nstages = [5, 20]\n").policy
    assert type(policy.hgm) is HGMParams and policy.hgm == HGMParams(alpha=0.5)
    assert type(policy.dgm) is DGMParams and policy.dgm.staged == StagedParams(stages=(5, 20))
    assert policy.dgm.lam == 4.0 and policy.dgm.alpha0 == DGMParams().alpha0


@pytest.mark.parametrize(("text", "words"), [
    ("[policy.hgm]\nalhpa = 0.5\n", "unknown key `policy.hgm.alhpa`"),
    ("[policy.hgm]\nalpha = 1.5\n", "policy.hgm.alpha"),
    ("[policy.dgm]\nstages = []\n", "at least one stage"),
    ("[policy.dgm]\nstages = [10, 0]\n", "policy.dgm.stages"),
])  # fmt: skip
def test_a_bad_policy_key_is_one_line_naming_it(text, words):
    with pytest.raises(ConfigError) as error:
        parse_config(text, "run.toml")
    message = str(error.value)
    assert words in message and "run.toml" in message and "\n" not in message


@pytest.mark.parametrize("make", [
    lambda: HGMParams(epsilon=1.0), lambda: HGMParams(min_evals=0), lambda: StagedParams(top_k_full=0),
    lambda: DGMParams(lam=0.0), lambda: StagedParams(stages=()),
])  # fmt: skip
def test_bad_values_are_refused_when_built_by_hand(make):
    with pytest.raises(ValueError):
        make()
