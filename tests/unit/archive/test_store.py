from pathlib import Path

import pytest

from evolve.archive import NodeNotFound, Run, RunNotFound
from evolve.errors import EvolveError


def test_nodes_are_commits_with_parent_commits(run, code, tmp_path):
    root = run.add_node(code({"agent.py": "v = 1\n", "pkg/util.py": "u = 0\n"}))
    child = run.add_node(
        code({"agent.py": "v = 2\n", "pkg/util.py": "u = 0\n"}),
        parent=root.id,
        origin="self_modify",
        instructions="bump v",
    )
    grandchild = run.add_node(code({"agent.py": "v = 3\n"}), parent=child.id, origin="self_modify")
    assert [root.id, child.id, grandchild.id] == ["0", "1", "2"]
    assert run.code.refs() == {n.id: n.commit for n in (root, child, grandchild)}
    parents = run.code._run("rev-list", "--parents", "-n", "1", child.commit).split()
    assert parents == [child.commit, root.commit]
    assert run.node(child.id).instructions == "bump v"

    out = run.checkout(child.id, tmp_path / "checkout")
    assert (out / "agent.py").read_text() == "v = 2\n"
    assert (out / "pkg" / "util.py").read_text() == "u = 0\n"

    assert "-v = 1\n+v = 2\n" in run.diff(child.id)
    to_root = run.diff(grandchild.id, against="root")
    assert "-v = 1\n+v = 3\n" in to_root and "deleted file mode" in to_root
    assert "-v = 2\n+v = 3\n" in run.diff(grandchild.id, against=child.id)
    assert "new file mode" in run.diff(root.id)  # the root's parent is the empty tree


def test_pycache_is_not_committed(run, code, tmp_path):
    node = run.add_node(code({"a.py": "x\n", "__pycache__/a.cpython-311.pyc": "junk"}))
    out = run.checkout(node.id, tmp_path / "out")
    assert not (out / "__pycache__").exists()


def test_evaluations_count_attempts_and_reject_bad_input(run, code):
    node = run.add_node(code({"a.py": "x\n"}))
    first = run.record_evaluation(node.id, "t1", "fail", duration_s=1.5, tokens=10, log_path="logs/x")
    second = run.record_evaluation(node.id, "t1", "pass")
    other = run.record_evaluation(node.id, "t2", "infra")
    assert (first.attempt, second.attempt, other.attempt) == (1, 2, 1)
    assert [e.outcome for e in run.evaluations(node.id)] == ["fail", "pass", "infra"]
    with pytest.raises(ValueError, match="unknown outcome"):
        run.record_evaluation(node.id, "t1", "passed")
    with pytest.raises(NodeNotFound):
        run.record_evaluation("42", "t1", "pass")
    assert len(run.evaluations()) == 3


def test_jobs_lifecycle(run, code):
    node = run.add_node(code({"a.py": "x\n"}))
    job = run.start_job("evaluate", node.id, "t1")
    assert [j.id for j in run.jobs("started")] == [job.id]
    run.finish_job(job.id, "finished", detail="pass")
    assert run.jobs("started") == []
    assert run.jobs()[0].state == "finished" and run.jobs()[0].finished >= job.started
    with pytest.raises(EvolveError):
        run.finish_job(job.id, "failed")  # already ended
    with pytest.raises(ValueError):
        run.finish_job(job.id, "started")


def test_usage_and_meta(run, code):
    node = run.add_node(code({"a.py": "x\n"}))
    run.add_usage(node.id, tokens=100, cost_usd=0.25)
    run.add_usage(node.id, tokens=50)
    assert (run.node(node.id).tokens, run.node(node.id).cost_usd) == (150, 0.25)
    run.set_meta("image:evolve-base", "sha256:abc")
    assert run.meta("image:evolve-base") == "sha256:abc"


def test_errors_are_typed(run, code, tmp_path):
    with pytest.raises(NodeNotFound):
        run.node("nope")
    with pytest.raises(NodeNotFound):
        run.add_node(code({"a.py": ""}), parent="nope")
    with pytest.raises(RunNotFound):
        Run.open(tmp_path / "absent")
    with pytest.raises(EvolveError, match="already holds a run"):
        Run.create(run.path)
    with pytest.raises(EvolveError, match="node id"):
        run.add_node(code({"a.py": ""}), node_id="../escape")


def test_invalid_children_are_recorded_with_reason(run, code):
    root = run.add_node(code({"a.py": "x\n"}))
    bad = run.add_node(
        code({"a.py": "syntax error(\n"}),
        parent=root.id,
        origin="self_modify",
        status="invalid",
        reason="agent no longer imports",
    )
    assert not run.node(bad.id).valid and run.node(bad.id).reason == "agent no longer imports"
    assert not run.tree().is_valid(bad.id)


def test_a_valid_node_is_invalidated_once_and_keeps_its_results(run, code):
    root = run.add_node(code({"a.py": "x\n"}))
    child = run.add_node(code({"a.py": "y\n"}), parent=root.id, origin="self_modify")
    run.record_evaluation(child.id, "t1", "fail")
    assert run.invalidate(child.id, "not compiled: every patch of the stage is empty")
    assert not run.invalidate(child.id, "a later reason")  # the first reason stays
    node = run.node(child.id)
    assert (node.valid, node.reason) == (False, "not compiled: every patch of the stage is empty")
    assert [e.outcome for e in run.evaluations(child.id)] == ["fail"]
    assert not run.tree().is_valid(child.id) and run.tree().own_counts(child.id).failures == 1
    with pytest.raises(NodeNotFound):
        run.invalidate("99", "no such node")


def test_reopen_repairs_half_written_nodes(run, code):
    root = run.add_node(code({"a.py": "x\n"}))
    # A writer died after writing the commit and ref of node 7 but before its row: discarded.
    orphan = run.code.commit_dir(code({"a.py": "y\n"}), root.commit, "node 7", 0)
    run.code.create_ref("7", orphan)
    # A ref lost after its row was written: the commit is there, so the ref is restored.
    run.code.delete_ref(root.id)
    run.close()
    with Run.open(run.path, writer=True) as reopened:
        assert reopened.code.refs() == {root.id: root.commit}
        assert [n.id for n in reopened.nodes()] == [root.id]


def test_results_and_job_completion_are_one_transaction(run, code):
    node = run.add_node(code({"a.py": "x\n"}))
    job = run.start_job("evaluate", node.id, "t1")
    run.record_evaluation(node.id, "t1", "pass", job_id=job.id)
    assert run.jobs()[0].state == "finished" and run.jobs()[0].detail == "pass"
    # A second result for the same job is refused and nothing of it is kept.
    with pytest.raises(EvolveError):
        run.record_evaluation(node.id, "t1", "fail", job_id=job.id)
    assert [e.outcome for e in run.evaluations()] == ["pass"]
    expansion = run.start_job("expand", node.id)
    child = run.add_node(code({"a.py": "y\n"}), parent=node.id, origin="self_modify", job_id=expansion.id)
    assert run.jobs()[1].state == "finished" and run.jobs()[1].detail == f"node {child.id}"
    with pytest.raises(EvolveError):
        run.add_node(code({"a.py": "z\n"}), parent=node.id, job_id=expansion.id)
    assert [n.id for n in run.nodes()] == [node.id, child.id]
    assert run.code.refs().keys() == {node.id, child.id}


def test_heldout_results_do_not_feed_the_search_tree(run, code):
    node = run.add_node(code({"a.py": "x\n"}))
    run.record_evaluation(node.id, "t1", "pass")
    run.record_evaluation(node.id, "h1", "fail", split="heldout")
    assert run.tree().own_counts(node.id).total == 1
    assert run.tree(split=None).own_counts(node.id).total == 2
    assert [e.task for e in run.evaluations(split="heldout")] == ["h1"]


def test_one_writer_at_a_time_and_readers_change_nothing(run, code):
    root = run.add_node(code({"a.py": "x\n"}))
    with pytest.raises(EvolveError, match="being written by pid"):
        Run.open(run.path, writer=True)
    # A writer is between the ref and the row of node 5: a reader must not touch that ref.
    pending = run.code.commit_dir(code({"a.py": "y\n"}), root.commit, "node 5", 0)
    run.code.create_ref("5", pending)
    with Run.open(run.path) as reader:
        assert [n.id for n in reader.nodes()] == [root.id]
    assert "5" in run.code.refs()
    run.close()
    with Run.open(run.path, writer=True) as writer:  # the lock is free again; repair runs
        assert "5" not in writer.code.refs()


def test_an_evaluations_log_is_found_through_the_run_from_any_working_directory(tmp_path, code, monkeypatch):
    """A run made as `archive/NAME` records `archive/NAME/logs/job-N`, relative to the writer's directory; a
    reader elsewhere (a resume, `evolve show`, the diagnosis's evidence) gets the run's own log directory."""
    (tmp_path / "here").mkdir()
    monkeypatch.chdir(tmp_path / "here")
    run = Run.create("archive/r")
    node = run.add_node(code({"a.py": "x\n"}))
    log = run.log_dir(1)
    (log / "agent.log").write_text("agent: limits after 3 steps\n")
    run.record_evaluation(node.id, "t1", "fail", log_path=str(log))
    # not a job's log: kept as recorded
    run.record_evaluation(node.id, "t2", "fail", log_path="/elsewhere/notes")
    monkeypatch.chdir(tmp_path)
    located, other = Run.open(tmp_path / "here" / "archive" / "r").evaluations()
    assert (Path(located.log_path) / "agent.log").read_text().startswith("agent: limits")
    assert other.log_path == "/elsewhere/notes"
