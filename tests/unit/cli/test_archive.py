import json
import subprocess
import sys

import pytest


def evolve(*args):
    return subprocess.run(
        [sys.executable, "-m", "evolve", *map(str, args)], capture_output=True, text=True, check=False
    )


@pytest.fixture
def populated(run, build_run):
    build_run()
    return run


def test_help_lists_the_commands():
    out = evolve("--help")
    assert out.returncode == 0
    for command in ("config", "status", "tree", "show", "diff", "export", "import"):
        assert command in out.stdout


def test_status_tree_show_diff(populated):
    path = populated.path
    summary = json.loads(evolve("status", path, "--json").stdout)
    assert summary["nodes"] == {"total": 4, "valid": 3, "invalid": 1}
    assert summary["evaluations"]["pass"] == 3 and summary["evaluations"]["infra"] == 1
    assert summary["best_node"]["id"] == "1"
    assert "nodes: 4 (3 valid, 1 invalid)" in evolve("status", path).stdout
    tree = evolve("tree", path).stdout.splitlines()
    assert tree[0].startswith("0  own 1/2 (0.50)  clade 3/6 (0.50)")
    assert any("3  own 0/0" in line and "[invalid: tests fail]" in line for line in tree)
    shown = evolve("show", path, "1").stdout
    assert "instructions:" in shown and "one" in shown and "t0: pass" in shown
    assert "-v = 1\n+v = 3\n" in evolve("diff", path, "3").stdout
    assert "-v = 0\n+v = 3\n" in evolve("diff", path, "3", "--against", "root").stdout


def test_export_then_import(populated, tmp_path):
    bundle = tmp_path / "run.evolve.tar.gz"
    assert evolve("export", populated.path, "-o", bundle).returncode == 0
    imported = evolve("import", bundle, "--dest", tmp_path / "copy")
    assert imported.returncode == 0 and "imported 4 nodes" in imported.stdout
    assert evolve("tree", tmp_path / "copy").stdout == evolve("tree", populated.path).stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("status", "/nonexistent/run"), "no run at /nonexistent/run"),
        (("show", "{run}", "99"), "has no node '99'"),
        (("diff", "{run}", "1", "--against", "77"), "has no node '77'"),
        (("import", "/nonexistent.tar.gz", "--dest", "/tmp/x"), "no such bundle"),
    ],
)
def test_errors_are_one_line_and_nonzero(populated, args, message):
    out = evolve(*[a.format(run=populated.path) for a in args])
    assert out.returncode == 1
    assert out.stderr.strip().count("\n") == 0 and message in out.stderr


def test_status_of_a_run_made_by_an_earlier_version_is_what_that_version_said(tmp_path):
    from tests.unit.archive.test_schema import V2_STATUS, v2_run

    path = v2_run(tmp_path)
    out = evolve("status", path, "--json")
    assert out.returncode == 0, out.stderr
    status = json.loads(out.stdout)
    # counted from git, beside it
    assert status.pop("code_edits") == {"code": 4, "expansions": 4, "rate": 1.0}
    # read from the jobs' logs, beside it: that version kept no records
    assert status.pop("candidates") is None
    lineage = status.pop("lineage")  # the best node's steps, computed beside it from the same rows
    assert [step["node"] for step in lineage] == status["best_node"]["lineage"]
    assert {**status, "path": None} == V2_STATUS


def test_an_unknown_value_in_a_run_is_one_error_line(tmp_path):
    import sqlite3

    from tests.unit.archive.test_schema import v2_run

    path = v2_run(tmp_path)
    with sqlite3.connect(path / "run.sqlite") as db:
        db.execute("UPDATE jobs SET kind = 'grade' WHERE id = 3")
    out = evolve("status", path)
    assert out.returncode == 1
    assert out.stderr.strip().splitlines() == [
        "error: unknown value 'grade' in column jobs.kind (this evolve knows evaluate, expand)"
    ]


def test_status_says_where_the_runs_candidates_ended(populated):
    """The tally over every expansion's candidate records (the wide lineage's: 31 candidates in 11 expansions,
    14 empty, 12 refused by the agent's own tests, one child), in the text, the JSON and the report."""
    from evolve.archive.candidates import Candidate, candidate_stages, write_candidates
    from evolve.archive.vocab import JobKind, JobState
    from evolve.report.data import _budget_rows

    assert "candidates" not in evolve("status", populated.path).stdout.split("code edits:")[1]
    assert json.loads(evolve("status", populated.path, "--json").stdout)["candidates"] is None
    for stages in (["applies", "own tests", None], ["applies", "applies", "own tests"]):
        job = populated.start_job(JobKind.EXPAND, "0")
        write_candidates(
            populated.log_dir(job.id),
            [
                Candidate(n, 0.2, stage is None, stage, "why", "code", 1, 1.0)
                for n, stage in enumerate(stages, 1)
            ],
        )
        populated.finish_job(job.id, JobState.FINISHED)
    assert candidate_stages(populated)[0] == 2
    text = evolve("status", populated.path).stdout
    assert "candidates: 6 in 2 expansions: 1 child; refused at applies 3, own tests 2" in text
    assert json.loads(evolve("status", populated.path, "--json").stdout)["candidates"] == {
        "expansions": 2,
        "stages": {"applies": 3, "own tests": 2, "child": 1},
    }
    rows = _budget_rows(populated, populated.tree(), populated.nodes(), 0, 0.0)  # the report's budget table
    assert ("candidates", "6 in 2 expansions: 1 child; refused at applies 3, own tests 2") in rows
