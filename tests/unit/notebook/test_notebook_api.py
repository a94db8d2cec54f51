from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pytest

from evolve.archive import Run, export_lineage
from evolve.errors import EvolveError
from evolve.notebook import (
    best_belief,
    build_example_run,
    focus_node,
    improvements,
    lineage,
    load_run,
    plot_outcomes,
    plot_progress,
    plot_tree,
    plot_usage,
    short_labels,
    show_diff,
)
from evolve.notebook.plots import heldout_tasks, outcome_matrix, progress_curves, tree_layout


def test_load_run_frames_and_graph_match_the_archive(loaded):
    nodes, evaluations = loaded.run.nodes(), loaded.run.evaluations()
    assert list(loaded.nodes.index) == [n.id for n in nodes]
    assert len(loaded.evaluations) == len(evaluations)
    assert set(loaded.tree.nodes) == {n.id for n in nodes}
    assert {(n.parent, n.id) for n in nodes if n.parent} == set(loaded.tree.edges)
    assert (loaded.nodes["status"] == "invalid").any()


def test_best_belief_is_the_epsilon_quantile_argmax(loaded):
    from scipy.stats import beta

    counts = {n: loaded.clade.own_counts(n) for n in loaded.clade if loaded.clade.own_counts(n).total >= 5}
    expected = max(counts, key=lambda n: beta.ppf(0.25, 1 + counts[n].successes, 1 + counts[n].failures))
    assert loaded.best == expected == best_belief(loaded.clade, 0.25, 5)


def test_best_belief_is_hgms_final_agent_and_never_an_invalid_node():
    from evolve.archive import CladeTree
    from evolve.search import HGMParams, HGMPolicy

    tree = CladeTree()
    tree.add_node("root")
    tree.add_node("lucky", "root", valid=False)  # the best scores, but invalidated after the fact
    tree.add_node("good", "root")
    for i in range(6):
        tree.record("lucky", i, True)
        tree.record("good", i, i < 4)
        tree.record("root", i, i < 1)
    assert best_belief(tree, 0.25, 5) == "good" == HGMPolicy(HGMParams(min_evals=5)).best(tree.view())
    tree.invalidate("good")
    assert best_belief(tree, 0.25, 5) == "root"


def test_load_run_reads_a_bundle(example_path, tmp_path):
    with Run.open(example_path) as run:
        bundle = export_lineage(run, tmp_path / "b.evolve.tar.gz")
    with load_run(bundle) as loaded:
        assert len(loaded.nodes) == 12
        scratch = loaded.path
    assert not scratch.exists()


def test_load_run_of_nothing_is_an_error(tmp_path):
    with pytest.raises(EvolveError):
        load_run(tmp_path / "missing")


def test_lineage_walks_root_to_node_with_instructions_and_scores(loaded):
    deepest = max(loaded.nodes.index, key=lambda n: loaded.nodes.at[n, "depth"])
    table = lineage(loaded, deepest)
    assert table.index[-1] == deepest and table.index[0] == loaded.clade.roots[0]
    assert len(table) == loaded.nodes.at[deepest, "depth"] + 1
    for child, parent in zip(table.index[1:], table.index[:-1], strict=True):
        assert table.at[child, "parent"] == parent
        assert table.at[child, "instructions"].startswith("Improve the agent")
        assert table.at[child, "files_changed"] in ("agent.py", "prompts.py")
    rates = table["pass_rate"].to_numpy()
    np.testing.assert_allclose(table["delta"].to_numpy()[1:], np.diff(rates))


def test_improvements_rank_every_edit_by_its_clade_change(loaded):
    table = improvements(loaded)
    nodes = loaded.nodes
    with_results = nodes[(nodes["clade_successes"] + nodes["clade_failures"] > 0) & nodes["parent"].notna()]
    assert set(table.index) == set(with_results.index)  # the whole tree, not one lineage
    assert list(table["clade_delta"]) == sorted(table["clade_delta"], reverse=True)
    for node, row in table.iterrows():
        assert row["clade_delta"] == pytest.approx(
            nodes.at[node, "clade_rate"] - nodes.at[row["parent"], "clade_rate"]
        )
        assert row["clade_results"] == loaded.clade.clade_counts(node).total


def test_focus_node_is_the_best_belief_unless_that_is_the_root(loaded):
    assert focus_node(loaded)[0] == loaded.best
    seed = type(loaded)(
        loaded.run, loaded.nodes, loaded.evaluations, loaded.tree, loaded.clade, loaded.clade.roots[0]
    )
    node, why = focus_node(seed)
    assert node == improvements(loaded).index[0] and "top-ranked edit" in why


def test_short_labels_are_unique_and_keep_the_distinct_part():
    dgm = ["initial", "20250101_000001_000001", "20250101_000002_000001", "20250101_000003_000002"]
    labels = short_labels(dgm)
    assert labels["initial"] == "initial" and labels["20250101_000002_000001"] == "…000002_000001"
    assert len(set(labels.values())) == len(dgm) and max(map(len, labels.values())) <= 15
    clash = ["x" * 20 + "a" + "y" * 14, "x" * 20 + "b" + "y" * 14]
    assert short_labels(clash) == {i: i for i in clash}  # cut to the same tail: shown in full


def test_show_diff_renders_the_parent_diff(loaded):
    child = next(n for n in loaded.nodes.index if loaded.nodes.at[n, "depth"] == 1)
    diff = show_diff(loaded, child)
    assert diff.text == loaded.run.diff(child)
    assert diff.files and diff.files[0] in ("agent.py", "prompts.py")
    assert diff._repr_markdown_().count("```") == 2
    assert str(show_diff(loaded, child, against="root")) == diff.text


def test_tree_layout_centres_parents_over_children(loaded):
    positions = tree_layout(loaded.clade)
    for node in loaded.clade:
        children = loaded.clade.children(node)
        assert positions[node][1] == -loaded.clade.depth(node)
        if children:
            assert positions[node][0] == pytest.approx(np.mean([positions[c][0] for c in children]))


def test_progress_curves_end_at_the_final_counts(loaded):
    curves = progress_curves(loaded, min_evals=3)
    counted = (loaded.evaluations["outcome"] != "infra").sum()
    assert curves["evaluations"].iloc[-1] == counted
    final_best = loaded.nodes[(loaded.nodes["successes"] + loaded.nodes["failures"]) >= 3]["pass_rate"].max()
    assert curves["best_so_far"].iloc[-1] == pytest.approx(final_best)
    root = loaded.clade.roots[0]
    assert curves["tree_pass_rate"].iloc[-1] == pytest.approx(loaded.nodes.at[root, "clade_rate"])


def test_outcome_matrix_holds_pass_fractions(loaded):
    matrix = outcome_matrix(loaded)
    row = loaded.evaluations.iloc[0]
    attempts = loaded.evaluations[
        (loaded.evaluations["node"] == row["node"]) & (loaded.evaluations["task"] == row["task"])
    ]
    assert matrix.at[row["node"], row["task"]] == pytest.approx((attempts["outcome"] == "pass").mean())
    assert set(matrix.index) == set(loaded.evaluations["node"])


def test_outcomes_put_heldout_tasks_last_and_mark_them(tmp_path):
    run = build_example_run(tmp_path / "run", nodes=4, tasks=4)
    run.record_evaluation(run.nodes()[0].id, "held-1", "pass", split="heldout")
    run.close()
    with load_run(tmp_path / "run") as loaded:
        assert heldout_tasks(loaded) == ["held-1"]
        assert list(outcome_matrix(loaded).columns)[-1] == "held-1"
        ax = plot_outcomes(loaded)
        labels = [label.get_text() for label in ax.get_xticklabels()]
        assert labels[-1] == "held-1 (held-out)" and not any("held-out" in label for label in labels[:-1])
        plt.close(ax.figure)


@pytest.mark.parametrize("plot", [plot_tree, plot_progress, plot_outcomes, plot_usage])
def test_plots_draw(loaded, plot, tmp_path):
    ax = plot(loaded)
    assert ax.has_data()
    out: Path = tmp_path / "plot.png"
    ax.figure.savefig(out)
    assert out.stat().st_size > 1000
    plt.close(ax.figure)


def test_tree_layout_of_a_deep_chain():
    from evolve.search.tree import CladeTree

    chain = CladeTree()
    chain.add_node(0)
    for node in range(1, 5000):
        chain.add_node(node, node - 1)
    chain.add_node("side", 0)
    positions = tree_layout(chain)
    assert positions[4999] == (0.0, -4999.0) and positions["side"] == (1.0, -1.0)
    assert positions[0] == (0.5, 0.0)
