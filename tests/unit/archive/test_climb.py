"""The climb's data from a recorded run (the published `humaneval-cpu` bundle: its final agent, node 4,
took the lead from node 1, which took it from the seed): every node by the expansion that made it, the
best-so-far by the run's final rule, the lineage with its held-out scores; and `evolve status` prints
the lineage's steps."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from evolve.archive import import_bundle
from evolve.archive.best import run_best
from evolve.archive.climb import lineage_steps, run_climb
from evolve.archive.compare import counted_outcomes
from evolve.cli import app
from evolve.meta.diagnose import NAME_CHARS, Instructions, edit_name
from evolve.report import collect, render

BUNDLE = Path(__file__).resolve().parents[3] / "archive" / "published" / "humaneval-cpu.evolve.tar.gz"


@pytest.fixture(scope="module")
def published(tmp_path_factory):
    run = import_bundle(BUNDLE, tmp_path_factory.mktemp("climb") / "humaneval-cpu")
    yield run
    run.close()


def test_the_best_so_far_climbs_from_the_seed_to_the_final_agent(published):
    climb = run_climb(published)
    best = run_best(published)
    assert best is not None and best.node == "4"
    nodes = {node.id: node for node in climb.nodes}
    # one root, the seed at 0
    assert [node.expansion for node in climb.nodes] == list(range(len(climb.nodes)))
    assert climb.steps == list(range(len(climb.nodes)))
    scores = [score for score in climb.best_score if score is not None]
    assert scores == sorted(scores)  # monotone on this run
    assert climb.best[0] == "0" and climb.best_score[0] == nodes["0"].score == 7 / 14
    assert climb.best[-1] == best.node and climb.best_score[-1] == best.successes / best.total == 31 / 40
    assert climb.best[:5] == ["0", "1", "1", "1", "4"]  # node 1 led from its own expansion until node 4's
    assert climb.rule == best.rule


def test_each_node_is_scored_by_the_counting_rule_and_the_lineage_is_the_final_agents(published):
    climb = run_climb(published)
    tree = published.tree()
    for node in climb.nodes:
        own = tree.own_counts(node.id)
        assert (node.successes, node.failures) == (own.successes, own.failures)
    assert [step.node for step in climb.lineage] == ["0", "1", "3", "4"]
    assert {node.id for node in climb.nodes if node.on_lineage} == {"0", "1", "3", "4"}
    held = {step.node: step.heldout for step in climb.lineage}
    assert held == {"0": (9, 32), "1": None, "3": None, "4": (10, 32)}  # measured on the seed and the final
    outcomes = counted_outcomes(published, "4", split="heldout")
    assert held["4"] == (sum(outcomes.values()), len(outcomes))
    assert [step.edit for step in climb.lineage] == ["none", "lesson", "lesson", "lesson"]
    assert lineage_steps(published) == climb.lineage


def test_a_long_run_asks_the_rule_at_fewer_expansions_and_still_ends_on_the_final_agent(published):
    climb = run_climb(published, steps=3)
    assert climb.steps == [0, 6, 12]
    assert climb.best == ["0", "4", "4"]


def test_an_edit_is_named_by_its_target_and_change_or_by_its_first_line():
    rendered = Instructions(
        "it fails", "no retry", "retry the call once", target="agent/loop.py:run"
    ).render()
    assert edit_name(rendered) == "agent/loop.py:run: retry the call once"
    assert edit_name(Instructions("p", "c", "add a test").render()) == "add a test"
    assert (
        edit_name("\n  Imported: make the agent read the tests\nmore")
        == "Imported: make the agent read the tests"
    )
    long = edit_name("x" * 200)
    assert len(long) == NAME_CHARS and long.endswith("...")


def test_status_prints_the_lineage_steps_with_their_scores_and_edits(published):
    done = CliRunner().invoke(app, ["status", str(published.path)])
    assert done.exit_code == 0, done.output
    lines = done.output.splitlines()
    start = lines.index("lineage of the final agent (dev: own counted results; held-out where measured):")
    steps = lines[start + 1 : start + 5]
    assert steps[0] == "  0 (expansion 0): dev 7/14 0.50, held-out 9/32 0.28, none: seed"
    assert steps[1].startswith("  1 (expansion 1): dev 29/40 0.72, lesson: ")
    assert steps[3].startswith("  4 (expansion 4): dev 31/40 0.78, held-out 10/32 0.31, lesson: ")
    assert "Problem:" not in "".join(steps)  # named by the change asked for, not the problem seen


def test_the_report_draws_the_climb(published):
    page = render(collect(published, detail_nodes=0))
    climb = page[page.index('<svg class="chart" id="climb"') :]
    climb = climb[: climb.index("</svg>")]
    scored = [node for node in run_climb(published).nodes if node.score is not None]
    assert climb.count('<g class="climb-node') == len(scored)
    assert climb.count('<g class="climb-node lineage') == 4 and climb.count('class="climb-heldout"') == 2
    assert 'class="series best-so-far"' in climb and 'class="series lineage"' in climb
    assert '<table id="climb-steps">' in page and page.count("<tr><td>") >= 4


def test_a_notebook_draws_the_same_climb(published):
    import matplotlib

    matplotlib.use("Agg")
    from evolve.notebook import load_run, plot_climb

    loaded = load_run(published.path)
    try:
        ax = plot_climb(loaded)
        best = next(line for line in ax.get_lines() if line.get_label().startswith("best-so-far"))
        climb = run_climb(published)
        assert list(best.get_xdata()) == climb.steps and list(best.get_ydata()) == climb.best_score
    finally:
        loaded.run.close()
