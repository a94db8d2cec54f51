import subprocess
import sys
from pathlib import Path

import pytest

from evolve.config import ConfigError, RunConfig, dump_config, load_config, parse_config

DATA = Path(__file__).parents[1] / "data"


def test_good_file_loads_with_types_and_defaults():
    config = load_config(DATA / "good.toml")
    assert config.run.seed == 7
    assert config.models.solve.provider == "openai-compatible"
    assert config.models.diagnose.provider == "embedded"
    assert config.policy.name == "dgm"
    assert config.policy.hgm.alpha == 0.5
    assert config.policy.hgm.epsilon == 0.25
    assert config.budget.dollars == 5.0
    assert config.tasks.limit == 20


def test_unknown_key_names_the_key_and_the_file():
    with pytest.raises(ConfigError) as caught:
        load_config(DATA / "bad.toml")
    message = str(caught.value)
    assert "bad.toml" in message and "policy.nmae" in message and "unknown key" in message
    assert "\n" not in message


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("[run]\nseed = 'one'\n", "run.seed"),
        ("[budget]\nevaluations = -5\n", "budget.evaluations"),
        ("[sandbox]\nmemory = 'lots'\n", "sandbox.memory"),
        ("[policy]\nname = 'best'\n", "policy.name"),
        ("[models.solve]\nprovider = 'magic'\n", "models.solve.provider"),
        ("[models.review]\nmodel = 'x'\n", "models.review"),
        ("[meta]\nprocedure = 'model'\n", "meta.procedure"),
    ],
)
def test_wrong_values_name_the_key(text, key):
    with pytest.raises(ConfigError) as caught:
        parse_config(text, "conf.toml")
    assert str(caught.value).startswith("conf.toml: ")
    assert f"`{key}`" in str(caught.value)


def test_missing_file_and_bad_toml_are_one_line_errors(tmp_path):
    with pytest.raises(ConfigError, match="no such file"):
        load_config(tmp_path / "absent.toml")
    broken = tmp_path / "broken.toml"
    broken.write_text("[run\nname = 1\n")
    with pytest.raises(ConfigError, match="broken.toml: not valid TOML") as caught:
        load_config(broken)
    assert "\n" not in str(caught.value)


def test_dump_round_trips():
    config = load_config(DATA / "good.toml")
    assert parse_config(dump_config(config)) == config
    assert parse_config(dump_config(RunConfig())) == RunConfig()


def test_cli_config_check_prints_one_line_and_fails():
    bad = subprocess.run(
        [sys.executable, "-m", "evolve", "config", "check", str(DATA / "bad.toml")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert bad.returncode != 0
    assert bad.stdout == ""
    lines = bad.stderr.strip().splitlines()
    assert len(lines) == 1 and "policy.nmae" in lines[0] and "bad.toml" in lines[0]
    good = subprocess.run(
        [sys.executable, "-m", "evolve", "config", "check", str(DATA / "good.toml")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert good.returncode == 0 and "ok" in good.stdout


def test_gea_loads_its_group_size_and_neighbours():
    from evolve.launch import policies_from_config
    from evolve.search import GEAPolicy

    config = parse_config(
        '[policy]\nname = "gea"\n[policy.gea]\ngroup_size = 3\nneighbours = 5\nstages = [4]\n'
    )
    policy = policies_from_config(config.policy)[config.policy.name]
    assert isinstance(policy, GEAPolicy)
    assert (policy.params.group_size, policy.params.neighbours, policy.params.stages) == (3, 5, (4,))
    assert parse_config(dump_config(config)) == config
    with pytest.raises(ConfigError, match="group_size"):
        parse_config("[policy.gea]\ngroup_size = 0\n")


def test_the_cost_aware_policy_and_the_cpu_hour_budget_load():
    from evolve.launch import policies_from_config
    from evolve.search import HGMCostPolicy

    config = parse_config(
        '[policy]\nname = "hgm_cost"\n[policy.hgm_cost]\nprice_exponent = 0.5\nalpha = 0.5\n'
        "[budget]\ncpu_hours = 12.5\n"
    )
    policy = policies_from_config(config.policy)[config.policy.name]
    assert isinstance(policy, HGMCostPolicy)
    assert (policy.params.price_exponent, policy.params.alpha) == (0.5, 0.5)
    assert config.budget.cpu_hours == 12.5
    assert parse_config(dump_config(config)) == config
    with pytest.raises(ConfigError, match="cpu_hours"):
        parse_config("[budget]\ncpu_hours = 0\n")
    with pytest.raises(ConfigError, match="price_exponent"):
        parse_config("[policy.hgm_cost]\nprice_exponent = -3\n")
    # the price is measured by the run, never set: an older run.toml's hand-set price is read and dropped
    older = parse_config("[policy.hgm_cost]\nexpand_cost = 4.0\nevals_per_node = 2.0\n").policy.hgm_cost
    assert older == parse_config("").policy.hgm_cost and "expand_cost" not in dump_config(parse_config(""))


def test_the_meta_procedure_is_the_engines_unless_the_agents_is_asked_for_and_not_with_dgms():
    assert RunConfig().meta.procedure == "engine"
    assert parse_config("[meta]\nprocedure = 'agent'\n").meta.procedure == "agent"
    with pytest.raises(ConfigError) as caught:
        parse_config("[meta]\nprocedure = 'agent'\nstyle = 'dgm'\n", "conf.toml")
    assert str(caught.value).startswith("conf.toml: [meta] meta.style") and "\n" not in str(caught.value)


def test_spectra_are_off_by_default_and_refused_where_no_diagnosis_reads_them():
    assert RunConfig().meta.spectra == 0
    assert parse_config("[meta]\nspectra = 2\n").meta.spectra == 2
    with pytest.raises(ConfigError) as caught:
        parse_config("[meta]\nspectra = 2\nprocedure = 'agent'\n", "conf.toml")
    assert "meta.spectra" in str(caught.value) and "\n" not in str(caught.value)


def test_the_screen_is_off_by_default_and_refused_without_the_spectra_that_run_its_tests():
    assert RunConfig().meta.screen == 0
    assert parse_config("[meta]\nspectra = 1\nscreen = 120\n").meta.screen == 120
    with pytest.raises(ConfigError) as caught:
        parse_config("[meta]\nscreen = 120\n", "conf.toml")
    assert "meta.screen = 120" in str(caught.value) and "meta.spectra" in str(caught.value)
    assert "\n" not in str(caught.value)
