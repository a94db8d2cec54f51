"""The archive's clade tree: the one `CladeTree`, results counted by the search's one rule."""

import networkx as nx
import pytest

from evolve.archive import CladeTree, Counts
from evolve.archive.records import Evaluation, Node
from evolve.archive.tree import build_tree, count_result, record_tasks, recorded_tasks, to_networkx


def small_tree() -> CladeTree:
    #   r ─ a ─ c
    #     └ b
    tree = CladeTree()
    tree.add_node("r")
    tree.add_node("a", "r")
    tree.add_node("b", "r")
    tree.add_node("c", "a", valid=False)
    return tree


def count(tree: CladeTree, node: str, task: str, outcome: str, tasks=None) -> bool:
    return count_result(tree, node, task, outcome, tasks)


def test_result_updates_node_and_ancestors_only():
    tree = small_tree()
    count(tree, "c", "t1", "pass")
    count(tree, "c", "t2", "fail")
    count(tree, "b", "t1", "timeout")
    count(tree, "a", "t1", "error")
    assert not count(tree, "a", "t2", "infra")  # infra never counts
    assert tree.own_counts("c") == Counts(1, 1)
    assert tree.own_counts("a") == Counts(0, 1)
    assert tree.clade_counts("a") == Counts(1, 2)
    assert tree.clade_counts("b") == Counts(0, 1)
    assert tree.clade_counts("r") == Counts(1, 3)
    assert tree.own_counts("r") == Counts(0, 0)
    assert tree.results == 4 and tree.evaluated("c") == {"t1", "t2"}


def test_only_the_first_result_per_task_and_only_search_tasks_count():
    tree = small_tree()
    assert count(tree, "a", "t1", "fail", {"t1", "t2"})
    assert not count(tree, "a", "t1", "pass", {"t1", "t2"})  # a repeat: the first result stands
    assert not count(tree, "a", "x9", "pass", {"t1", "t2"})  # not a search task
    assert count(tree, "a", "t2", "pass", {"t1", "t2"})
    assert tree.own_counts("a") == Counts(1, 1) and tree.clade_counts("r") == Counts(1, 1)


def test_reading_clade_counts_never_changes_own_counts():
    tree = small_tree()
    count(tree, "a", "t1", "pass")
    count(tree, "c", "t1", "fail")
    for _ in range(100):
        tree.clade_counts("a")
        tree.clade_counts("r")
    assert tree.own_counts("a") == Counts(1, 0)
    assert tree.clade_counts("a") == Counts(1, 1)


def test_structure_queries():
    tree = small_tree()
    assert tree.roots == ["r"]
    assert tree.children("r") == ("a", "b")
    assert tree.ancestors("c") == ["a", "r"]
    assert tree.descendants("r") == ["a", "c", "b"]
    assert tree.depth("c") == 2 and tree.parent("c") == "a" and tree.parent("r") is None
    assert not tree.is_valid("c")
    assert len(tree) == 4 and "c" in tree and list(tree) == ["r", "a", "b", "c"]


def test_bad_structure_is_refused():
    tree = small_tree()
    with pytest.raises(ValueError):
        tree.add_node("a", "r")
    with pytest.raises(KeyError):
        tree.add_node("d", "nope")
    with pytest.raises(ValueError):
        count(tree, "a", "t1", "maybe")
    with pytest.raises(KeyError):
        tree.invalidate("nope")


def test_a_view_is_a_snapshot_of_the_tree():
    tree = small_tree()
    count(tree, "a", "t1", "pass")
    view = tree.view(("t1", "t2"), 10, pending_evaluations=[("b", "t2")], pending_expansions=["a"])
    count(tree, "a", "t2", "fail")
    tree.invalidate("b")
    tree.add_node("d", "b")
    assert view.ids == ("r", "a", "b", "c") and view.used == 1
    assert view.failures.tolist() == [0, 0, 0, 0] and view.valid.tolist() == [True, True, True, False]
    assert view.evaluated[1] == {"t1"} and view.clade_successes.tolist() == [1, 1, 0, 0]
    assert view.pending_eval_counts.tolist() == [0, 0, 1, 0] and view.pending_expansions == (1,)
    assert tree.view().failures.tolist() == [0, 1, 0, 0, 0]


def test_build_tree_counts_rows_by_the_rule_and_the_recorded_tasks():
    nodes = [Node("r", None, "c", 0.0, "seed"), Node("a", "r", "c", 0.0, "self_modify", "invalid")]
    rows = [
        Evaluation("a", "t1", 1, "infra"),
        Evaluation("a", "t1", 2, "pass"),
        Evaluation("a", "t1", 3, "fail"),
        Evaluation("r", "x", 1, "pass"),
        Evaluation("r", "t2", 1, "fail"),
    ]
    everything = build_tree(nodes, rows, None)
    assert everything.own_counts("a") == Counts(1, 0) and everything.own_counts("r") == Counts(1, 1)
    searched = build_tree(nodes, rows, {"t1", "t2"})
    assert searched.own_counts("r") == Counts(0, 1) and searched.clade_counts("r") == Counts(1, 1)
    assert not searched.is_valid("a")


class _Meta(dict):
    def meta(self, key):
        return self[key]

    def set_meta(self, key, value):
        self[key] = value


def test_search_tasks_are_recorded_once_and_read_back():
    run = _Meta()
    assert recorded_tasks(run) is None
    record_tasks(run, ["t2", "t1"])
    assert recorded_tasks(run) == {"t1", "t2"} and run["search_tasks"] == '["t1", "t2"]'


def test_to_networkx_carries_counts():
    tree = small_tree()
    count(tree, "c", "t1", "pass")
    graph = to_networkx(tree)
    assert set(graph.edges) == {("r", "a"), ("r", "b"), ("a", "c")}
    assert nx.is_arborescence(graph)
    assert graph.nodes["r"]["clade_successes"] == 1
    assert graph.nodes["r"]["successes"] == 0
    assert graph.nodes["c"]["valid"] is False
