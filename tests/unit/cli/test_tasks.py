"""`evolve tasks list` and `evolve eval`'s argument checks (no Docker, no model)."""

from __future__ import annotations

from typer.testing import CliRunner

from evolve.cli.app import app


def test_tasks_list_shows_suites_and_tasks():
    runner = CliRunner()
    suites = runner.invoke(app, ["tasks", "list"])
    assert suites.exit_code == 0 and "builtin" in suites.output and "164" in suites.output
    heldout = runner.invoke(app, ["tasks", "list", "builtin", "--split", "heldout"])
    assert (
        heldout.exit_code == 0
        and "shop-bulk-discount" in heldout.output
        and "textkit-to-roman" not in heldout.output
    )


def test_tasks_check_rejects_unknown_task_ids():
    result = CliRunner().invoke(app, ["tasks", "check", "builtin", "--task", "no-such-task"])
    assert result.exit_code != 0 and "no-such-task" in result.output


def test_eval_rejects_a_malformed_agent(tmp_path):
    from evolve.cli.eval import open_agent
    from evolve.errors import EvolveError

    try:
        open_agent("not-a-node", tmp_path, None)
    except EvolveError as exc:
        assert "RUN:NODE" in str(exc)
    else:
        raise AssertionError("a malformed --agent was accepted")
