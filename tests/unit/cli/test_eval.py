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
