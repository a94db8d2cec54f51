"""`evolve export-traces` on the published runs: files `datasets` loads, labels that agree with the archive,
held-out tasks left out unless asked for, and the two recipe filters."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from evolve.archive import Run, import_bundle
from evolve.cli.app import app
from evolve.traces import TraceFilter, export_traces, trace_records

datasets = pytest.importorskip("datasets", reason="the tracking extra: pip install 'evolve[tracking]'")

PUBLISHED = Path(__file__).parents[2] / "archive" / "published"


@pytest.fixture(scope="module", params=["humaneval-cpu", "humaneval-cpu-wide", "quickstart-embedded"])
def published(request, tmp_path_factory) -> Path:
    """A published bundle rebuilt into a run directory (what `evolve import` does)."""
    dest = tmp_path_factory.mktemp("published") / request.param
    import_bundle(PUBLISHED / f"{request.param}.evolve.tar.gz", dest).close()
    return dest


def load(path: Path):
    return datasets.load_dataset("json", data_files=str(path), split="train")


def test_the_export_loads_as_chat_records_labelled_as_the_archive_says(published, tmp_path):
    out = tmp_path / "traces.jsonl"
    result = CliRunner().invoke(app, ["export-traces", str(published), "-o", str(out)])
    assert result.exit_code == 0, result.output
    loaded = load(out)
    assert len(loaded) > 0 and f"wrote {len(loaded)} exchanges" in result.output
    with Run.open(published) as run:
        jobs = {j.id: j for j in run.jobs()}
        evaluations = run.evaluations()
        nodes = {n.id: n for n in run.nodes()}
        tree = run.tree(with_tasks=False)
        heldout_tasks = {e.task for e in run.evaluations(split="heldout")}
    assert "heldout" not in set(loaded["split"])  # never the test set, by default
    for record in loaded:
        assert record["messages"][-1]["role"] == "assistant" and record["messages"][0]["role"] == "system"
        assert record["role"] in ("solve", "diagnose", "modify")
        if record["job_kind"] == "evaluate":
            job = jobs[record["job"]]
            assert (record["node"], record["task"]) == (job.node, job.task)
            # the outcome of the evaluation its job recorded (the job finished with it as its detail)
            assert record["outcome"] == job.detail and record["outcome"] in {
                str(e.outcome)
                for e in evaluations
                if (e.node, e.task, str(e.split)) == (job.node, job.task, record["split"])
            }
            assert record["task"] not in heldout_tasks
        else:
            child = nodes[record["child"]]
            assert child.parent == record["node"] and record["child_valid"] == child.valid
            mine, theirs = tree.own_counts(child.id), tree.own_counts(child.parent)
            if child.valid and mine.total and theirs.total:
                assert record["child_better"] == (mine.mean > theirs.mean)


def test_held_out_exchanges_only_when_asked_for(published, tmp_path):
    with Run.open(published) as run:
        everything = list(trace_records(run))
        heldout = sum(record["split"] == "heldout" for record in everything)
        kept = export_traces(run, tmp_path / "all.jsonl", keep=TraceFilter(include_heldout=True))
        default = export_traces(run, tmp_path / "default.jsonl")
    assert kept.records == len(everything) and default.records == len(everything) - heldout
    assert default.heldout_left_out == heldout
    if heldout:
        assert "heldout" in set(load(tmp_path / "all.jsonl")["split"])


def test_the_recipe_filters_keep_passing_solves_and_improving_expansions(published, tmp_path):
    with Run.open(published) as run:
        everything = [r for r in trace_records(run) if r["split"] != "heldout"]
        passing = export_traces(run, tmp_path / "passing", keep=TraceFilter(passing_solves=True), fmt="hf")
        improving = export_traces(
            run, tmp_path / "improving.jsonl", keep=TraceFilter(improving_expansions=True)
        )
    solves = datasets.load_from_disk(str(tmp_path / "passing"))
    assert (
        len(solves)
        == passing.records
        == sum(
            r["role"] == "solve" and r["job_kind"] == "evaluate" and r["outcome"] == "pass"
            for r in everything
        )
        > 0
    )
    assert set(solves["outcome"]) == {"pass"} and set(solves["role"]) == {"solve"}
    rows = [json.loads(line) for line in (tmp_path / "improving.jsonl").read_text().splitlines()]
    assert len(rows) == improving.records
    assert all(r["child_valid"] and r["child_better"] and r["role"] in ("diagnose", "modify") for r in rows)
    assert all(r["candidate_chosen"] is not False for r in rows)


def test_bad_input_is_one_line_naming_what_is_wrong(tmp_path):
    result = CliRunner().invoke(app, ["export-traces", str(tmp_path)])
    assert result.exit_code == 1 and "not a run directory (no run.sqlite)" in str(result.exception)
    (tmp_path / "run.sqlite").touch()
    result = CliRunner().invoke(app, ["export-traces", str(tmp_path), "--format", "csv"])
    assert result.exit_code == 1 and str(result.exception) == "--format must be jsonl or hf, not 'csv'"
