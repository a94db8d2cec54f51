"""`evolve eval --agent DIR`: a fresh run whose only node is the agent in DIR."""

import pytest

from evolve.cli.eval import open_agent
from evolve.config import RunConfig
from evolve.errors import EvolveError


def test_an_agent_directory_becomes_the_node_evaluated(tmp_path):
    agent = tmp_path / "mine"
    (agent / "agent").mkdir(parents=True)
    (agent / "agent" / "__main__.py").write_text("X = 2\n")
    run, node_id = open_agent(str(agent), tmp_path / "archive", RunConfig())
    try:
        assert (run.checkout(node_id, tmp_path / "out") / "agent" / "__main__.py").read_text() == "X = 2\n"
    finally:
        run.close()


def test_a_directory_that_is_no_agent_is_refused(tmp_path):
    with pytest.raises(EvolveError, match="no agent/__main__.py"):
        open_agent(str(tmp_path), tmp_path / "archive", RunConfig())


class _Refused(Exception):
    """Raised by the stand-in gateway once it has seen its arguments: nothing is evaluated."""


def test_eval_seeds_the_gateway_from_its_run_seed(tmp_path, monkeypatch):
    import evolve.llm.gateway
    import evolve.llm.stack
    from evolve.cli.eval import eval_command
    from evolve.config import RunSection, dump_config

    seen: list = []

    class Stack:
        def __init__(self, *args, **kwargs) -> None:
            self.models: dict = {}

        def start(self):
            return self

        def close(self) -> None: ...

    def gateway(*args, **kwargs):
        seen.append(kwargs.get("seed"))
        raise _Refused

    monkeypatch.setattr(evolve.llm.stack, "ModelStack", Stack)
    monkeypatch.setattr(evolve.llm.gateway, "Gateway", gateway)
    config = tmp_path / "run.toml"
    config.write_text(dump_config(RunConfig(run=RunSection(seed=17))))
    with pytest.raises(_Refused):
        eval_command(agent="seed", suite="builtin", limit=1, config=config, archive=tmp_path / "archive")
    assert seen == [17]
