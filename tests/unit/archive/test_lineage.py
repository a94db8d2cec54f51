import json
import os
import signal
import subprocess
import sys
import tarfile

import pytest
from typer.testing import CliRunner

from evolve.archive import export_lineage, import_bundle
from evolve.archive.tree import record_tasks, recorded_tasks
from evolve.cli import app
from evolve.errors import EvolveError


def results(run):
    return sorted((e.node, e.task, e.attempt, e.outcome, e.duration_s, e.tokens) for e in run.evaluations())


def test_export_import_reproduces_ids_trees_and_results(run, build_run, tmp_path):
    build_run()
    bundle = export_lineage(run, tmp_path / "all.evolve.tar.gz")
    with import_bundle(bundle, tmp_path / "copy") as copy:
        assert copy.nodes() == run.nodes()
        for node in copy.nodes():
            assert copy.code.tree_hash(node.commit) == run.code.tree_hash(node.commit)
        assert results(copy) == results(run)
        assert copy.jobs() == run.jobs()
        assert copy.exchanges_file(1).read_text() == '{"request": 1}\n'
        assert copy.diff("3", against="root") == run.diff("3", against="root")
        for node in run.nodes():
            assert copy.tree().clade_counts(node.id) == run.tree().clade_counts(node.id)


def test_a_copy_counts_only_the_search_tasks_the_original_counts(run, build_run, tmp_path):
    build_run()
    tasks = sorted({e.task for e in run.evaluations()})
    record_tasks(run, tasks[:1])  # as a runner records its task set; the rest is `evolve eval` extra
    bundle = export_lineage(run, tmp_path / "all.evolve.tar.gz")
    with import_bundle(bundle, tmp_path / "copy") as copy:
        assert recorded_tasks(copy) == {tasks[0]}
        for node in run.nodes():
            assert copy.tree().own_counts(node.id) == run.tree().own_counts(node.id)
            assert {*copy.tree().evaluated(node.id)} <= {tasks[0]}


def test_export_of_one_lineage_holds_root_to_node(run, build_run, tmp_path):
    root, a, _b, c = build_run()
    bundle = export_lineage(run, tmp_path / "c.evolve.tar.gz", c.id)
    with import_bundle(bundle, tmp_path / "copy") as copy:
        assert [n.id for n in copy.nodes()] == [root.id, a.id, c.id]
        assert all(e.node in {root.id, a.id, c.id} for e in copy.evaluations())
        # A new node added after import continues the id sequence.
        (tmp_path / "more").mkdir()
        (tmp_path / "more" / "agent.py").write_text("v = 9\n")
        assert copy.add_node(tmp_path / "more", parent=c.id).id == "4"


def test_bad_bundles_are_refused(run, build_run, tmp_path):
    with pytest.raises(EvolveError, match="no such bundle"):
        import_bundle(tmp_path / "absent.tar.gz", tmp_path / "x")
    junk = tmp_path / "junk.tar.gz"
    junk.write_bytes(b"not a tarball")
    with pytest.raises(EvolveError, match="not an evolve bundle"):
        import_bundle(junk, tmp_path / "y")
    build_run()
    bundle = export_lineage(run, tmp_path / "b.tar.gz")
    tampered = tmp_path / "tampered.tar.gz"
    staging = tmp_path / "staging"
    with tarfile.open(bundle) as tar:
        tar.extractall(staging, filter="data")
    rows = [json.loads(line) for line in (staging / "nodes.jsonl").read_text().splitlines()]
    rows[1]["tree"] = "0" * 40
    (staging / "nodes.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    with tarfile.open(tampered, "w:gz") as tar:
        for item in staging.iterdir():
            tar.add(item, arcname=item.name)
    with pytest.raises(EvolveError, match="has tree"):
        import_bundle(tampered, tmp_path / "z")


def test_logs_travel_with_the_bundle_and_log_paths_point_inside_the_imported_run(run, code, tmp_path):
    root = run.add_node(code({"agent.py": "v = 0\n"}))
    job = run.start_job("evaluate", root.id, "t0")
    (run.log_dir(job.id) / "transcript.txt").write_text("the agent said hello\n")
    run.finish_job(job.id, "finished")
    run.record_evaluation(root.id, "t0", "pass", log_path=str(run.log_dir(job.id)))
    run.record_evaluation(root.id, "t1", "fail", log_path="/elsewhere/on/another/machine")
    with_logs = export_lineage(run, tmp_path / "with.tar.gz", with_logs=True)
    with import_bundle(with_logs, tmp_path / "copy") as copy:
        paths = {e.task: e.log_path for e in copy.evaluations()}
        assert paths == {"t0": str(copy.path / "logs" / f"job-{job.id}"), "t1": None}
        assert (
            copy.path / "logs" / f"job-{job.id}" / "transcript.txt"
        ).read_text() == "the agent said hello\n"
    without = export_lineage(run, tmp_path / "without.tar.gz", with_logs=False)
    with import_bundle(without, tmp_path / "bare") as bare:
        assert {e.log_path for e in bare.evaluations()} == {None}  # never a path on the exporting machine


def _record(run, job_id: str, node: str, role: str, prompt: int, completion: int) -> None:
    from evolve.llm.exchanges import Exchange, ExchangeLog, exchanges_file, request_digest
    from evolve.llm.types import ChatRequest, ChatResponse, Message, Usage

    request = ChatRequest(messages=(Message(role="user", content=f"{job_id} {role}"),))
    response = ChatResponse(
        message=Message(role="assistant", content="ok"),
        model="m",
        usage=Usage(prompt_tokens=prompt, completion_tokens=completion),
    )
    ExchangeLog(exchanges_file(run.path / "exchanges", job_id)).append(
        Exchange(
            seq=0,
            job_id=job_id,
            node_id=node,
            role=role,
            request_sha256=request_digest(request),
            request=request,
            response=response,
            response_id="r",
            created=1_700_000_000,
        )
    )


def _files(root):
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _by_role(run):
    from evolve.report.usage import usage_over_time

    usage = usage_over_time(run, run.jobs())
    return {role: series.totals[-1] for role, series in usage.tokens.items()}


def test_a_round_trip_of_every_job_kind_keeps_every_log_byte_and_the_usage_by_role(run, code, tmp_path):
    root = run.add_node(code({"agent.py": "v = 0\n"}))
    expand = run.start_job("expand", root.id)
    for step, role, tokens in (
        ("diagnose", "diagnose", 300),
        ("modify", "modify", 500),
        ("validate", "solve", 70),
    ):
        _record(run, f"{expand.id}-{step}", root.id, role, tokens, 11)
    for name, text in (
        ("instructions.md", "do better\n"),
        ("validate-smoke.log", "smoke ok\n"),
        ("material/failures.txt", "t0 failed\n"),
    ):
        (run.log_dir(expand.id) / name).parent.mkdir(parents=True, exist_ok=True)
        (run.log_dir(expand.id) / name).write_text(text)
    child = run.add_node(
        code({"agent.py": "v = 1\n"}), parent=root.id, origin="self_modify", job_id=expand.id
    )
    for node, task, split in ((root.id, "t0", "dev"), (child.id, "t0", "dev"), (child.id, "h0", "heldout")):
        job = run.start_job("evaluate", node, task, split=split)
        _record(run, str(job.id), node, "solve", 40, 9)
        (run.log_dir(job.id) / "transcript.jsonl").write_text('{"step": 1}\n')
        run.record_evaluation(
            node, task, "pass", log_path=str(run.log_dir(job.id)), split=split, job_id=job.id
        )
    before = _by_role(run)
    assert set(before) == {"diagnose", "modify", "solve"}

    bundle = export_lineage(run, tmp_path / "all.evolve.tar.gz")
    with import_bundle(bundle, tmp_path / "copy") as copy:
        assert _by_role(copy) == before
        assert _files(copy.path / "exchanges") == _files(run.path / "exchanges")
        assert _files(copy.path / "logs") == _files(run.path / "logs")

    from evolve.archive.lineage import left_out

    dropped = left_out(run)
    assert (dropped.directories, dropped.files) == (4, 6)
    assert "left out 4 job log directories (6 files" in dropped.line()
    with import_bundle(
        export_lineage(run, tmp_path / "bare.tar.gz", with_logs=False), tmp_path / "bare"
    ) as bare:
        assert _by_role(bare) == before  # the exchanges always travel
        assert not any((bare.path / "logs").rglob("*.txt"))


KILLED_IMPORT = """
import os, signal, sys
from evolve.archive import import_bundle
from evolve.archive.store import Run
adopt = Run.adopt_evaluation
def adopt_then_die(self, evaluation):
    adopt(self, evaluation)
    os.kill(os.getpid(), signal.SIGKILL)  # midway: every node in, one evaluation of many
Run.adopt_evaluation = adopt_then_die
import_bundle(sys.argv[1], sys.argv[2])
"""


def test_a_killed_import_leaves_nothing_at_the_destination_and_a_second_import_succeeds(
    run, build_run, tmp_path
):
    build_run()
    bundle = export_lineage(run, tmp_path / "all.evolve.tar.gz")
    dest = tmp_path / "copy"
    killed = subprocess.run(
        [sys.executable, "-c", KILLED_IMPORT, str(bundle), str(dest)],
        check=False,
        env={**os.environ, "PYTHONPATH": os.getcwd()},
        capture_output=True,
        text=True,
    )
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert not dest.exists() and list(tmp_path.glob(".copy.importing-*"))  # only the dead importer's staging
    status = CliRunner().invoke(app, ["status", str(dest)])
    assert status.exit_code != 0 and "no run at" in str(status.exception or status.output)
    with import_bundle(bundle, dest) as copy:
        assert results(copy) == results(run) and copy.nodes() == run.nodes()
    assert not list(tmp_path.glob(".copy.importing-*"))  # swept by the second import


def test_an_import_refuses_a_destination_that_is_not_empty_and_leaves_it_as_it_was(run, build_run, tmp_path):
    build_run()
    bundle = export_lineage(run, tmp_path / "all.evolve.tar.gz")
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "notes.txt").write_text("mine")
    with pytest.raises(EvolveError, match="not an empty directory"):
        import_bundle(bundle, tmp_path / "full")
    assert [p.name for p in (tmp_path / "full").iterdir()] == ["notes.txt"]
    (tmp_path / "empty").mkdir()
    with import_bundle(bundle, tmp_path / "empty") as copy:  # an empty directory is a fine destination
        assert copy.nodes() == run.nodes()
