"""A group iteration (GEA's `ExpandGroup`) on the real runner: one decision, one expansion per parent."""

from collections import defaultdict

from evolve.config import BudgetConfig
from evolve.search import GEAParams, GEAPolicy


def test_group_expansions_share_one_decision(make_runner):
    policy = GEAPolicy(GEAParams(stages=(3, 6), group_size=2))
    runner, run, _ = make_runner(BudgetConfig(evaluations=300, expansions=6), policy=policy, concurrency=3)
    runner.execute()
    groups = defaultdict(list)
    for job in run.jobs():
        if job.kind == "expand":
            groups[job.decision].append(job.node)
    sizes = [len(nodes) for _, nodes in sorted(groups.items())]
    assert sizes == [1, 2, 2, 1]  # the root alone, then groups of K, the last cut to the budget left
    assert all(len(set(nodes)) == len(nodes) for nodes in groups.values())  # distinct parents per group
    decisions = [j.decision for j in run.jobs() if j.decision is not None]
    assert run.decisions_recorded() == max(decisions) + 1 == len(set(decisions))  # one ordinal per decision
    children = defaultdict(list)
    for node in run.nodes():
        if node.parent is not None:
            children[node.parent].append(node.id)
    assert sum(map(len, children.values())) == 6
