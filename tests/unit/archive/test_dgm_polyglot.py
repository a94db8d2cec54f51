"""Run directories the importers used to get wrong: a truncated or missing HGM metadata file, a DGM
directory given as HGM, and DGM Polyglot runs (imported, or refused with the reason and the fix)."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from evolve.archive import Run, import_dgm_run
from evolve.archive.importers import load_concatenated_json
from evolve.errors import EvolveError

FIXTURES = Path(__file__).resolve().parents[3] / "archive" / "published" / "fixtures"
DGM_RUN, DGM_CODE = FIXTURES / "dgm" / "run", FIXTURES / "dgm" / "initial-code"
HGM_RUN = FIXTURES / "hgm" / "run"


def evolve(*args):
    return subprocess.run(
        [sys.executable, "-m", "evolve", *map(str, args)], capture_output=True, text=True, check=False
    )


def one_error_line(out, *needles):
    lines = out.stderr.strip().splitlines()
    assert out.returncode == 1 and len(lines) == 1 and lines[0].startswith("error: "), out.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


def test_a_truncated_hgm_metadata_file_imports_its_complete_entries_with_a_warning(tmp_path):
    copy = shutil.copytree(HGM_RUN, tmp_path / "hgm")
    text = (HGM_RUN / "hgm_metadata.jsonl").read_text()
    last = text.rindex("\n{") + 1
    (copy / "hgm_metadata.jsonl").write_text(text[: last + (len(text) - last) // 2])  # a crash mid-append
    out = evolve("import", "--from", "hgm", copy, "--dest", tmp_path / "run")
    assert out.returncode == 0, out.stderr
    assert f"warning: {copy / 'hgm_metadata.jsonl'}: its last entry is incomplete" in out.stderr
    assert "imported its 2 complete entries" in out.stderr
    with Run.open(tmp_path / "run") as run:
        joined = {n.id for n in run.nodes() if "#" in n.origin or n.parent is None}  # hgm:<commit>#<hgm id>
    second = load_concatenated_json(HGM_RUN / "hgm_metadata.jsonl")[1]["nodes"]
    assert joined == {"initial", *(str(n["commit_id"]) for n in second)}
    with pytest.raises(EvolveError, match="not concatenated JSON"):  # damage before the end is still refused
        (copy / "hgm_metadata.jsonl").write_text(text[:40] + text[last:])
        load_concatenated_json(copy / "hgm_metadata.jsonl")


def test_a_missing_hgm_metadata_file_is_refused(tmp_path):
    copy = shutil.copytree(HGM_RUN, tmp_path / "hgm")
    (copy / "hgm_metadata.jsonl").unlink()
    out = evolve("import", "--from", "hgm", copy, "--dest", tmp_path / "run")
    one_error_line(out, f"{copy / 'hgm_metadata.jsonl'}: missing")
    assert not (tmp_path / "run").exists()


def test_from_hgm_on_a_dgm_directory_names_the_right_option(tmp_path):
    out = evolve("import", "--from", "hgm", DGM_RUN, "--dest", tmp_path / "run")
    one_error_line(out, f"{DGM_RUN}: a DGM run directory", "--from dgm --initial-code DIR")
    assert not (tmp_path / "run").exists()
    out = evolve("import", "--from", "dgm", HGM_RUN, "--initial-code", DGM_CODE, "--dest", tmp_path / "run")
    one_error_line(out, f"{HGM_RUN}: an HGM run directory", "--from hgm")
    assert not (tmp_path / "run").exists()


@pytest.fixture
def polyglot_run(tmp_path):
    """The DGM fixture as a Polyglot run: Polyglot task ids, and initial code whose coding_agent.py is the
    SWE-bench agent while coding_agent_polyglot.py is the agent the patches were made against."""
    run_dir = shutil.copytree(DGM_RUN, tmp_path / "dgm")
    for metadata in run_dir.glob("*/metadata.json"):
        text = metadata.read_text()
        for task in ("t1", "t2", "t3", "t4", "t5"):
            text = text.replace(f'"{task}"', f'"python__exercise-{task}"')
        metadata.write_text(text)
    code = shutil.copytree(DGM_CODE, tmp_path / "dgm-code")
    (code / "coding_agent.py").rename(code / "coding_agent_polyglot.py")
    (code / "coding_agent.py").write_text("# the SWE-bench agent\n")
    (code / "utils").mkdir()
    (code / "utils" / "eval_utils.py").write_text("# SWE-bench only\n")
    return run_dir, code


def test_a_dgm_polyglot_run_imports_with_the_polyglot_agent_as_coding_agent(polyglot_run, tmp_path):
    run_dir, code = polyglot_run
    with (
        import_dgm_run(DGM_RUN, DGM_CODE, tmp_path / "plain").run as plain,
        import_dgm_run(run_dir, code, tmp_path / "polyglot").run as polyglot,
    ):
        assert [(n.id, n.status) for n in polyglot.nodes()] == [(n.id, n.status) for n in plain.nodes()]
        for node in plain.nodes():
            assert polyglot.code.tree_hash(polyglot.node(node.id).commit) == plain.code.tree_hash(node.commit)
        assert {e.task for e in polyglot.evaluations()} >= {"python__exercise-t1"}


def test_a_dgm_polyglot_run_without_the_polyglot_agent_is_refused_with_the_fix(polyglot_run, tmp_path):
    run_dir, _ = polyglot_run
    out = evolve("import", "--from", "dgm", run_dir, "--initial-code", DGM_CODE, "--dest", tmp_path / "run")
    one_error_line(
        out,
        "a DGM Polyglot run",
        "coding_agent_polyglot.py as coding_agent.py",
        f"{DGM_CODE} has no coding_agent_polyglot.py",
        "pass --initial-code",
    )
    assert not (tmp_path / "run").exists()


def test_task_ids_decide_polyglot():
    from evolve.archive.dgm_polyglot import is_polyglot_run

    def perf(*ids):
        return {"overall_performance": {"total_resolved_ids": list(ids)}}

    assert is_polyglot_run([perf("python__bowling", "rust__grep")])
    assert not is_polyglot_run([perf("django__django-11099")])
    assert not is_polyglot_run([perf("python__bowling", "django__django-11099")])
    assert not is_polyglot_run([{}])
