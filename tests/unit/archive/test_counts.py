"""The SQL counts equal the counting rule applied row by row (`build_tree`), on archives that hold
every case the rule has: repeats, infra, held-out rows, tasks outside the search's set, attempts
that do not start at 1 (imported runs), deep lineages."""

import random

import pytest

from evolve.archive.counts import counted_tree, own_counts
from evolve.archive.records import Evaluation, Node
from evolve.archive.tree import build_tree, record_tasks
from evolve.search.tree import CladeTree

OUTCOMES = ("pass", "fail", "timeout", "error", "infra")


def _fill(run, seed: int, nodes: int = 30) -> None:
    rng = random.Random(seed)
    for index in range(nodes):
        parent = None if index == 0 else str(rng.randrange(index) if rng.random() < 0.5 else index - 1)
        run.adopt_node(Node(str(index), parent, "0" * 40, float(index), "self_modify",
                            "invalid" if rng.random() < 0.1 else "valid"))  # fmt: skip
    tasks = [f"t{i}" for i in range(8)]
    for _ in range(nodes * 6):
        node, task = str(rng.randrange(nodes)), rng.choice(tasks)
        split = "heldout" if rng.random() < 0.2 else "dev"
        run.record_evaluation(node, task, rng.choice(OUTCOMES), split=split)
    # an imported run's attempts: numbered as the other engine numbered them
    for index in range(min(5, nodes)):
        for attempt in (2, 3):
            run.adopt_evaluation(Evaluation(str(index), "imported", attempt, rng.choice(OUTCOMES)))


def _same(fast: CladeTree, slow: CladeTree, with_tasks: bool) -> None:
    assert list(fast) == list(slow) and fast.results == slow.results
    for node in slow:
        assert fast.own_counts(node) == slow.own_counts(node), node
        assert fast.clade_counts(node) == slow.clade_counts(node), node
        assert fast.is_valid(node) == slow.is_valid(node) and fast.parent(node) == slow.parent(node)
        if with_tasks:
            assert fast.evaluated(node) == slow.evaluated(node), node


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("search_tasks", [None, ["t0", "t1", "t2", "t3", "t4", "imported"], []])
def test_sql_counts_equal_the_rule_row_by_row(run, seed, search_tasks):
    _fill(run, seed)
    if search_tasks is not None:
        record_tasks(run, search_tasks)
    for split in ("dev", "heldout", None):
        slow = build_tree(
            run.nodes(), run.evaluations(split=split), None if search_tasks is None else set(search_tasks)
        )
        for with_tasks in (True, False):
            _same(counted_tree(run, split, with_tasks=with_tasks), slow, with_tasks)
        assert run.tree(split).view().successes.tolist() == slow.view().successes.tolist()


def test_a_tree_of_counts_only_refuses_what_it_cannot_know(run):
    _fill(run, 7)
    tree = run.tree(with_tasks=False)
    for refused in (lambda: tree.evaluated("0"), tree.view, lambda: tree.record("0", "t0", True)):
        with pytest.raises(ValueError, match="counts only"):
            refused()


def test_a_repeat_counts_its_first_counting_result_only(run):
    _fill(run, 1, nodes=2)
    run.record_evaluation("1", "fresh", "infra")
    run.record_evaluation("1", "fresh", "fail")
    run.record_evaluation("1", "fresh", "pass")
    before = own_counts(run)["1"]
    slow = build_tree(run.nodes(), run.evaluations(split="dev"), None)
    assert (before.successes, before.failures) == (
        slow.own_counts("1").successes,
        slow.own_counts("1").failures,
    )
    assert "fresh" in run.tree().evaluated("1")


def test_bulk_counts_refuse_tasks_counted_already():
    tree = CladeTree()
    tree.add_node("a")
    tree.record("a", "t1", True)
    with pytest.raises(ValueError, match="new tasks"):
        tree.record_counts([("a", 1, 0, frozenset({"t1"}))])
    with pytest.raises(ValueError, match="new tasks"):
        tree.record_counts([("a", 2, 0, frozenset({"t2"}))])


def test_a_view_reads_one_state_of_a_live_run(run):
    from evolve.archive.store import Run

    _fill(run, 2, nodes=5)
    with Run.open(run.path) as reader:
        with reader.snapshot():
            before = reader.tree().results
            run.record_evaluation("1", "late", "pass")  # the live run's writer commits meanwhile
            assert reader.tree().results == before and "late" not in reader.tree().evaluated("1")
        assert reader.tree().results == before + 1
