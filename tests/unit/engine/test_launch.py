"""`[seed] path`: a run's root is any directory that meets the agent contract; `[seed] agent`: a bundled
one."""

import pytest

from evolve.config import ConfigError, parse_config
from evolve.errors import EvolveError
from evolve.launch import load_tasks, open_run


def _config(tmp_path, agent):
    return parse_config(f'[run]\nname = "r"\narchive_dir = "{tmp_path}"\n\n[seed]\npath = "{agent}"\n')


def test_the_root_is_the_seed_path(tmp_path):
    agent = tmp_path / "mine"
    (agent / "agent").mkdir(parents=True)
    (agent / "agent" / "__main__.py").write_text("X = 1\n")
    run = open_run(_config(tmp_path, agent), None)
    try:
        (root,) = run.nodes()
        assert root.origin == "seed"
        assert (run.checkout(root.id, tmp_path / "out") / "agent" / "__main__.py").read_text() == "X = 1\n"
    finally:
        run.close()


def test_a_seed_path_that_is_no_agent_is_refused_before_the_run_exists(tmp_path):
    with pytest.raises(EvolveError, match=r"\[seed\] path: .*no such directory"):
        open_run(_config(tmp_path, tmp_path / "missing"), None)
    assert not (tmp_path / "r").exists()


def test_seed_agent_bare_roots_the_run_at_the_bare_seed(tmp_path):
    run = open_run(
        parse_config(f'[run]\nname = "r"\narchive_dir = "{tmp_path}"\n\n[seed]\nagent = "bare"\n'), None
    )
    try:
        (root,) = run.nodes()
        tree = run.checkout(root.id, tmp_path / "out")
        assert "```replace" in (tree / "agent" / "__main__.py").read_text()
        assert (tree / "tests" / "test_agent.py").is_file() and not (tree / "agent" / "repairs.py").exists()
    finally:
        run.close()


def test_an_unknown_seed_agent_or_two_roots_are_one_line_each(tmp_path):
    with pytest.raises(
        ConfigError, match=r"^<config>: key `seed.agent`: Input should be 'seed' or 'bare' \(got 'tiny'\)$"
    ):
        parse_config('[seed]\nagent = "tiny"\n')
    with pytest.raises(
        ConfigError, match=r'^<config>: \[seed\] seed.path and seed.agent = "bare" both name the root'
    ):
        parse_config('[seed]\nagent = "bare"\npath = "mine"\n')


def test_named_search_tasks_are_searched_in_their_order_and_a_wrong_one_is_named():
    tasks = load_tasks(
        parse_config('[tasks]\nids = ["todo-tags", "shop-low-stock", "inifile-as-bool"]\nlimit = 2\n')
    )
    assert list(tasks.search) == ["todo-tags", "shop-low-stock"]
    assert len(tasks.heldout) == 10  # the held-out split is untouched
    with pytest.raises(
        EvolveError, match=r"^\[tasks\] ids: todo-summary, nope not in split 'dev' of builtin$"
    ):
        load_tasks(parse_config('[tasks]\nids = ["todo-tags", "todo-summary", "nope"]\n'))
