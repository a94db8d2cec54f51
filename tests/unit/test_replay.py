import json
import subprocess
import sys
import tarfile

import pytest

from evolve.archive import Run, export_lineage
from evolve.engine.replays import ReplayChannels, replayable
from evolve.errors import EvolveError
from evolve.notebook import build_example_run
from evolve.replay import Replayed, rerun, scratch_copy, verify_code


@pytest.fixture(scope="module")
def example(tmp_path_factory):
    root = tmp_path_factory.mktemp("replay")
    with build_example_run(root / "run") as run:
        bundle = export_lineage(run, root / "run.evolve.tar.gz")
    return root / "run", bundle


def rewrite_nodes(bundle, dest, change):
    """A copy of `bundle` whose nodes.jsonl rows went through `change(row)`."""
    with tarfile.open(bundle) as tar:
        members = {m.name: tar.extractfile(m).read() if m.isfile() else None for m in tar.getmembers()}
    rows = [json.loads(line) for line in members["nodes.jsonl"].decode().splitlines()]
    members["nodes.jsonl"] = "".join(json.dumps(change(r)) + "\n" for r in rows).encode()
    staging = dest.parent / "staging"
    for name, data in members.items():
        path = staging / name
        if data is None:
            path.mkdir(parents=True, exist_ok=True)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
    with tarfile.open(dest, "w:gz") as tar:
        for item in sorted(staging.iterdir()):
            tar.add(item, arcname=item.name)
    return dest


def json_parent(bundle, node):
    with tarfile.open(bundle) as tar:
        rows = [json.loads(line) for line in tar.extractfile("nodes.jsonl").read().decode().splitlines()]
    return next(r["parent"] for r in rows if r["id"] == node)


def test_every_node_of_a_bundle_and_a_run_is_verified(example):
    run_dir, bundle = example
    for source in (run_dir, bundle):
        checks = verify_code(source)
        assert len(checks) == 12 and all(c.ok for c in checks)
    with Run.open(run_dir) as run:
        assert [c.recorded_tree for c in verify_code(bundle)] == [
            run.code.tree_hash(n.commit) for n in run.nodes()
        ]


def test_node_option_checks_only_its_lineage(example):
    run_dir, _ = example
    with Run.open(run_dir) as run:
        deepest = max(run.nodes(), key=lambda n: run.tree().depth(n.id))
        depth = run.tree().depth(deepest.id)
    checks = verify_code(run_dir, deepest.id)
    assert [c.node for c in checks][-1] == deepest.id and len(checks) == depth + 1
    with pytest.raises(EvolveError, match="no node"):
        verify_code(run_dir, "nope")


def test_a_wrong_tree_hash_or_parent_is_reported_for_that_node(example, tmp_path):
    _, bundle = example
    bad_tree = rewrite_nodes(
        bundle, tmp_path / "a" / "t.tar.gz", lambda r: {**r, "tree": "0" * 40} if r["id"] == "3" else r
    )
    assert [c.node for c in verify_code(bad_tree) if not c.ok] == ["3"]
    moved = next(c.node for c in verify_code(bundle) if c.node != "0" and json_parent(bundle, c.node) != "0")
    bad_parent = rewrite_nodes(
        bundle, tmp_path / "b" / "p.tar.gz", lambda r: {**r, "parent": "0"} if r["id"] == moved else r
    )
    failed = [c for c in verify_code(bad_parent) if not c.ok]
    assert [(c.node, c.parent_ok) for c in failed] == [(moved, False)]
    out = subprocess.run(
        [sys.executable, "-m", "evolve", "replay", str(bad_tree)], capture_output=True, text=True, check=False
    )
    assert out.returncode == 1
    assert "node 3: tree 000000000000 MISMATCH" in out.stdout and "11/12 nodes' code verified" in out.stdout


def test_cli_replay_verifies_a_bundle(example):
    _, bundle = example
    out = subprocess.run(
        [sys.executable, "-m", "evolve", "replay", str(bundle), "--json"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["verified"] == report["nodes"] == 12


def test_rerun_counts_matching_outcomes_per_node(example):
    run_dir, _ = example
    with scratch_copy(run_dir) as run:
        pairs = replayable(run)
        assert all(job is not None and job.node == e.node and job.task == e.task for e, job in pairs)
        replayed = pairs[:-1]  # the last evaluation's job has no recording: not replayable
        for _, job in replayed:
            run.exchanges_file(job.id).write_text("{}\n")
        flipped = replayed[0][0]

        def fake(scratch, evaluation, job):
            assert scratch is run
            if evaluation == flipped:
                return Replayed("pass" if evaluation.outcome != "pass" else "fail", "flipped")
            return Replayed(evaluation.outcome)

        results = {r.node: r for r in rerun(run, fake)}
    assert sum(r.compared for r in results.values()) == len(replayed)
    assert sum(r.matching for r in results.values()) == len(replayed) - 1
    (miss,) = results[flipped.node].mismatches
    assert (miss.task, miss.recorded, miss.detail) == (flipped.task, flipped.outcome, "flipped")
    assert sum(len(r.skipped) for r in results.values()) == 1


def test_replay_channels_open_the_recorded_job():
    calls = []

    class Gateway:
        def open_job(self, job_id, node_id, role, budget):
            calls.append(("open", job_id, node_id))
            return "channel"

        def close_job(self, job_id):
            calls.append(("close", job_id))
            return "usage"

    channels = ReplayChannels(Gateway(), 41)
    assert channels.open_job("99", "n", "solve", 10) == "channel"
    assert channels.close_job("99") == "usage"
    assert calls == [("open", 41, "n"), ("close", 41)] and channels.closed == ["usage"]
