"""Many threads recording at once: counts after reopening equal a brute-force recount."""

import threading
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from evolve.archive import Run
from evolve.archive.records import counts_as

THREADS = 8
NODES = 200
EVALUATIONS = 5_000


def brute_force_clade_counts(nodes, evaluations):
    parent = {n.id: n.parent for n in nodes}
    own, seen = Counter(), set()
    for e in evaluations:  # the search's rule: the first counted result of a node on a task
        success = counts_as(e.outcome)
        if success is not None and (e.node, e.task) not in seen:
            seen.add((e.node, e.task))
            own[(e.node, success)] += 1
    totals = {}
    for node in parent:
        clade = [other for other in parent if _is_in_clade(other, node, parent)]
        totals[node] = (sum(own[(m, True)] for m in clade), sum(own[(m, False)] for m in clade))
    return totals


def _is_in_clade(candidate, root, parent):
    while candidate is not None:
        if candidate == root:
            return True
        candidate = parent[candidate]
    return False


def test_threads_record_nodes_and_evaluations_consistently(tmp_path):
    run = Run.create(tmp_path / "run")
    seed_code = tmp_path / "seed"
    seed_code.mkdir()
    (seed_code / "agent.py").write_text("step = 0\n")
    run.add_node(seed_code)
    lock = threading.Lock()

    def worker(index: int) -> None:
        rng = np.random.default_rng(index)
        for step in range(NODES // THREADS):
            with lock:
                existing = [n.id for n in run.nodes()]
            parent = existing[int(rng.integers(len(existing)))]
            code = tmp_path / f"w{index}-{step}"
            code.mkdir()
            (code / "agent.py").write_text(f"step = {index}-{step}\n")
            run.add_node(code, parent=parent, origin="self_modify")
            for _ in range(EVALUATIONS // NODES):
                with lock:
                    existing = [n.id for n in run.nodes()]
                target = existing[int(rng.integers(len(existing)))]
                outcome = ["pass", "fail", "timeout", "error", "infra"][int(rng.integers(5))]
                run.record_evaluation(target, f"task-{int(rng.integers(40))}", outcome)

    with ThreadPoolExecutor(THREADS) as pool:  # all at once; result() re-raises a worker's error
        for future in [pool.submit(worker, i) for i in range(THREADS)]:
            future.result()
    run.close()

    with Run.open(tmp_path / "run") as reopened:
        nodes, evaluations = reopened.nodes(), reopened.evaluations()
        assert len(nodes) == NODES + 1
        assert len(evaluations) == EVALUATIONS
        assert len({n.id for n in nodes}) == len(nodes)
        assert reopened.code.refs() == {n.id: n.commit for n in nodes}
        tree = reopened.tree()
        expected = brute_force_clade_counts(nodes, evaluations)
        for node in nodes:
            counts = tree.clade_counts(node.id)
            assert (counts.successes, counts.failures) == expected[node.id], node.id
        attempts = Counter((e.node, e.task) for e in evaluations)
        for e in evaluations:
            assert 1 <= e.attempt <= attempts[(e.node, e.task)]
