"""`evolve status` and `evolve tree` from SQL counts: the same figures as the records give, and a lineage
thousands of nodes deep draws (no recursion)."""

from collections import Counter

import pytest

from evolve.archive.records import Node
from evolve.archive.summary import render_node, render_summary, render_tree, run_summary
from evolve.archive.tree import build_tree, record_tasks, recorded_tasks
from evolve.archive.vocab import NodeStatus
from evolve.search import HGMPolicy
from tests.unit.archive.test_counts import _fill


@pytest.mark.parametrize("seed", range(3))
def test_the_summary_equals_the_records(run, seed):
    _fill(run, seed)
    if seed:
        record_tasks(run, ["t1", "t2", "t4", "imported"])
    run.start_job("evaluate", "0", "t1")
    summary = run_summary(run)
    nodes, evaluations = run.nodes(), run.evaluations()
    tree = build_tree(nodes, run.evaluations(split="dev"), recorded_tasks(run))
    best = HGMPolicy(run.config.policy.hgm).best(tree.view())  # the run's policy, on the row-by-row tree
    assert run.node(best).valid
    lineage = [best, *tree.ancestors(best)][::-1]
    assert {k: v for k, v in summary["best_node"].items() if k != "rule"} == {
        "id": best,
        "passed": tree.own_counts(best).successes,
        "evaluated": tree.own_counts(best).total,
        "lineage": lineage,
    }
    outcomes = Counter(e.outcome for e in evaluations)
    assert summary["evaluations"] == {
        "total": len(evaluations),
        **{o: outcomes.get(o, 0) for o in ("pass", "fail", "timeout", "error", "infra", "forged")},
    }
    assert summary["nodes"] == {
        "total": len(nodes),
        "valid": sum(n.valid for n in nodes),
        "invalid": sum(not n.valid for n in nodes),
    }
    assert summary["jobs"]["total"] == 1 and summary["jobs"]["started"] == 1


def test_a_deep_lineage_draws(run):
    for index in range(3000):
        run.adopt_node(
            Node(str(index), None if index == 0 else str(index - 1), "0" * 40, float(index), "seed")
        )
    run.record_evaluation("2999", "t", "pass")
    lines = render_tree(run.nodes(), run.tree(with_tasks=False)).splitlines()
    assert len(lines) == 3000
    assert lines[0].startswith("0  own 0/0  clade 1/1") and lines[-1].strip().endswith(
        "2999  own 1/1 (1.00)  clade 1/1 (1.00)"
    )


def test_a_forged_verdict_is_a_failure_to_the_search_and_flags_its_node(run, code):
    from evolve.archive.vocab import counts_as

    node = run.add_node(code({"a.py": "x\n"}))
    run.record_evaluation(node.id, "t1", "pass")
    run.record_evaluation(node.id, "t2", "forged")
    assert counts_as("forged") is False
    counts = run.tree(with_tasks=False).own_counts(node.id)
    assert (counts.successes, counts.failures) == (1, 1)
    summary = run_summary(run)
    assert summary["flagged"] == [node.id] and summary["evaluations"]["forged"] == 1
    assert f"FLAGGED (a forged verdict: the tested code wrote its own): {node.id}" in render_summary(summary)
    assert "FLAGGED: 1 forged verdict(s)" in render_node(run, node.id).splitlines()[0]


def test_an_invalid_nodes_long_reason_takes_one_line_of_the_tree(run):
    """A refused candidate's reason holds its test output; the tree shows its first line (show has it
    whole)."""
    run.adopt_node(Node("0", None, "0" * 40, 0.0, "seed"))
    reason = (
        "the agent's own tests fail: ...\n>       return agent.run(x)\nE       TypeError: missing 'system'\n"
    )
    run.adopt_node(Node("1", "0", "0" * 40, 1.0, "self_modify", NodeStatus.INVALID, reason=reason))
    run.adopt_node(Node("2", "0", "0" * 40, 2.0, "self_modify", NodeStatus.INVALID, reason="x" * 300))
    run.adopt_node(Node("3", "0", "0" * 40, 3.0, "self_modify", NodeStatus.INVALID, reason="empty diff"))
    lines = render_tree(run.nodes(), run.tree(with_tasks=False)).splitlines()
    assert len(lines) == 4
    assert lines[1].endswith("[invalid: the agent's own tests fail: ... (evolve show NODE)]")
    assert lines[2].endswith("[invalid: " + "x" * 100 + " ... (evolve show NODE)]")
    assert lines[3].endswith("[invalid: empty diff]")
