import networkx as nx
import pytest

from evolve.archive import CladeTree, Counts


def small_tree() -> CladeTree:
    #   r ─ a ─ c
    #     └ b
    tree = CladeTree()
    tree.add_node("r")
    tree.add_node("a", "r")
    tree.add_node("b", "r")
    tree.add_node("c", "a", valid=False)
    return tree


def test_result_updates_node_and_ancestors_only():
    tree = small_tree()
    tree.record("c", "pass")
    tree.record("c", "fail")
    tree.record("b", "timeout")
    tree.record("a", "error")
    tree.record("a", "infra")  # infra never counts
    assert tree.own_counts("c") == Counts(1, 1)
    assert tree.own_counts("a") == Counts(0, 1)
    assert tree.clade_counts("a") == Counts(1, 2)
    assert tree.clade_counts("b") == Counts(0, 1)
    assert tree.clade_counts("r") == Counts(1, 3)
    assert tree.own_counts("r") == Counts(0, 0)


def test_reading_clade_counts_never_changes_own_counts():
    tree = small_tree()
    tree.record("a", "pass")
    tree.record("c", "fail")
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
    assert tree.depth("c") == 2
    assert not tree.is_valid("c")
    assert len(tree) == 4 and "c" in tree


def test_bad_structure_is_refused():
    tree = small_tree()
    with pytest.raises(ValueError):
        tree.add_node("a", "r")
    with pytest.raises(KeyError):
        tree.add_node("d", "nope")
    with pytest.raises(ValueError):
        tree.record("a", "maybe")


def test_to_networkx_carries_counts():
    tree = small_tree()
    tree.record("c", "pass")
    graph = tree.to_networkx()
    assert set(graph.edges) == {("r", "a"), ("r", "b"), ("a", "c")}
    assert nx.is_arborescence(graph)
    assert graph.nodes["r"]["clade_successes"] == 1
    assert graph.nodes["r"]["successes"] == 0
    assert graph.nodes["c"]["valid"] is False
