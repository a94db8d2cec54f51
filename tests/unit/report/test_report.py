"""The run report: its numbers come from the one clade tree, it reads as a reader, and agent-written
text (instructions, diffs, task ids) cannot break out of the page."""

import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from typer.testing import CliRunner

from evolve.archive import Run
from evolve.cli.app import app
from evolve.errors import EvolveError
from evolve.notebook import best_belief, build_example_run
from evolve.report import collect, render, watch_report, write_report

HOSTILE = '</script><script>document.title="pwned"</script><img src="http://attacker.example/x.png">'


@pytest.fixture(scope="module")
def example(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("report") / "run"
    run = build_example_run(path)
    best = best_belief(run.tree(), run.config.policy.hgm.epsilon, run.config.policy.hgm.min_evals)
    run.record_evaluation(best, "heldout-1", "pass", split="heldout")
    run.record_evaluation(best, "heldout-2", "fail", split="heldout")
    with tempfile.TemporaryDirectory() as tmp:  # an agent-written node: hostile instructions and code
        run.checkout(best, Path(tmp))
        (Path(tmp) / "agent.py").write_text(HOSTILE + "\n")
        hostile = run.add_node(Path(tmp), parent=best, origin="self_modify", instructions=HOSTILE)
    run.record_evaluation(hostile.id, HOSTILE, "pass")
    (path / "exchanges" / "job-1.jsonl").write_text(
        json.dumps(
            {
                "role": "solve",
                "created": 100.0,
                "response": {"usage": {"prompt_tokens": 7, "completion_tokens": 3, "cost_usd": 0.5}},
            }
        )
        + "\n"
        + json.dumps(
            {
                "role": "diagnose",
                "created": 200.0,
                "response": {
                    "usage": {"prompt_tokens": 20, "completion_tokens": 5, "cached_prompt_tokens": 15}
                },
            }
        )
        + "\n"
        + '{"role": "solve", "created": 300, "resp'  # a line cut by a crash mid-append
    )
    run.close()
    return path


@pytest.fixture(scope="module")
def data(example):
    with Run.open(example) as run:
        return collect(run)


def test_counts_and_best_belief_come_from_the_one_clade_tree(example, data):
    with Run.open(example) as run:
        tree = run.tree()
        params = run.config.policy.hgm
        assert data.best is not None and data.best.node == best_belief(tree, params.epsilon, params.min_evals)
        for node in data.nodes:
            own, clade = tree.own_counts(node.id), tree.clade_counts(node.id)
            assert node.own == (own.successes, own.failures) and node.clade == (
                clade.successes,
                clade.failures,
            )
        assert {n.id for n in data.nodes if n.on_best_lineage} == {
            data.best.node,
            *tree.ancestors(data.best.node),
        }
    low, high = data.best.interval
    assert 0 <= low < data.best.successes / (data.best.successes + data.best.failures) < high <= 1
    assert data.best.heldout == (1, 2)
    assert data.heldout_tasks == ["heldout-1", "heldout-2"]


def test_diffs_are_against_the_parent(example, data):
    with Run.open(example) as run:
        for node in data.nodes:
            assert node.diff == (None if node.parent is None else run.diff(node.id))


def test_progress_curves_end_at_the_final_counts(data):
    curves = data.curves
    assert curves.evaluations[-1] == sum(sum(n.own) for n in data.nodes)
    assert curves.evaluations == sorted(curves.evaluations) and len(curves.hours) == len(curves.evaluations)
    best = data.best
    assert curves.best_belief[-1] == pytest.approx(best.successes / (best.successes + best.failures))
    least = curves.min_results  # a node with one lucky pass is not the best observed
    assert curves.best_observed[-1] == max(n.own[0] / sum(n.own) for n in data.nodes if sum(n.own) >= least)
    seed = data.nodes[0]
    assert curves.seed[-1] == pytest.approx(seed.own[0] / sum(seed.own))  # the baseline: the seed's own rate


def test_usage_by_role_reads_the_recorded_exchanges_and_skips_a_cut_line(data):
    usage = data.usage
    assert usage.exchanges == 2
    assert usage.tokens["solve"].totals[-1] == 10 and usage.tokens["diagnose"].totals[-1] == 25
    assert usage.dollars["solve"].totals[-1] == 0.5
    assert set(usage.cpu_hours) == {"expand", "evaluate"}
    assert usage.prompt_cache == {"solve": (7, 0), "diagnose": (20, 15)}
    assert usage.cache_hit_rate("diagnose") == 0.75 and usage.cache_hit_rate("modify") == 0.0
    assert "diagnose 75% of 20" in render(data)


def test_the_page_is_self_contained_and_agent_text_stays_text(data):
    page = render(data)
    # the node data, the exchanges and the page's own script, nothing injected
    assert page.count("<script") == 3
    assert HOSTILE not in page and "<script>document" not in page
    # nothing loads from anywhere
    assert not re.search(r"<(link|img|iframe|object|embed)\b", page, re.IGNORECASE)
    assert not re.search(r"\b(src|href)=[\"'](?!#)", page)  # links only to places in the page
    assert len(re.findall(r'<g class="node', page)) == len(data.nodes)
    assert page.count('class="node invalid') == sum(not n.valid for n in data.nodes)
    assert 'id="curve-evaluations"' in page and 'id="curve-time"' in page and 'id="grid"' in page
    assert page.count(">held-out</text>") == 2


def test_write_report_is_a_reader_while_the_writer_holds_the_run(example, tmp_path):
    with Run.open(example, writer=True) as writer:
        out = write_report(example, tmp_path / "page.html")
        assert out.read_text().startswith("<!DOCTYPE html>") and (out.stat().st_mode & 0o777) == 0o644
        writer.record_evaluation(writer.nodes()[0].id, "late-task", "pass")
        waits = []
        assert watch_report(example, out, 5.0, rounds=2, sleep=waits.append) == 2
    assert waits == [5.0]
    page = out.read_text()
    assert '<meta http-equiv="refresh" content="5">' in page and "late-task" in page
    assert list(tmp_path.iterdir()) == [out]  # no staging file left behind


def _evolve(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "evolve", *args], check=False, capture_output=True, text=True, timeout=120
    )


def test_cli_writes_the_page(example, tmp_path):
    done = CliRunner().invoke(app, ["report", str(example), "-o", str(tmp_path / "r.html")])
    assert done.exit_code == 0, done.output
    assert (tmp_path / "r.html").read_text().count('<g class="node') == 13
    refused = CliRunner().invoke(app, ["report", str(example), "--watch", "0"])
    assert isinstance(refused.exception, EvolveError) and "positive number of seconds" in str(
        refused.exception
    )


def test_cli_refuses_what_is_not_a_run_in_one_line(tmp_path):
    bad = _evolve("report", str(tmp_path))
    assert bad.returncode == 1 and bad.stderr.strip().count("\n") == 0 and "not a run directory" in bad.stderr
    assert not list(tmp_path.iterdir())  # nothing written


def test_a_large_run_embeds_details_of_the_best_lineage_first(example):
    with Run.open(example) as run:
        data = collect(run, detail_nodes=2)
    detailed = {n.id for n in data.nodes if n.detailed}
    lineage = [n.id for n in data.nodes if n.on_best_lineage]
    assert detailed == set(lineage[:2])
    panel = json.loads(data.panel_json())
    assert all(("diff" in panel[n.id]) == n.detailed for n in data.nodes)
    assert all(panel[n.id]["own"] == list(n.own) for n in data.nodes)  # counts for every node still


def test_live_report_waits_for_the_run_then_keeps_the_page_current(example, tmp_path):
    import shutil
    import time

    from evolve.report import live_report

    run_dir, page = tmp_path / "live", tmp_path / "live.html"
    with live_report(run_dir, page, every_s=0.05):
        time.sleep(0.2)
        assert not page.exists()  # no run yet: nothing written, no error
        shutil.copytree(example, run_dir)
        for _ in range(200):
            if page.exists():
                break
            time.sleep(0.05)
    assert page.exists() and '<meta http-equiv="refresh" content="1">' in page.read_text()


def test_an_exchange_row_of_another_shape_is_left_out_and_the_page_is_written():
    """A damaged or foreign bundle's exchange log may hold JSON that is not an exchange (`{"request": 1}`):
    the report leaves that row out and shows the others, instead of failing."""
    from evolve.report.exchanges import node_exchanges

    with tempfile.TemporaryDirectory() as tmp, Run.create(Path(tmp) / "run") as run:
        code = Path(tmp) / "code"
        (code / "agent").mkdir(parents=True)
        (code / "agent" / "__init__.py").write_text("")
        node = run.add_node(code)
        job = run.start_job("evaluate", node.id, task="t")
        good = {
            "role": "solve",
            "request": {"messages": [{"role": "user", "content": "hi"}]},
            "response": {"message": {"content": "ok"}, "usage": {"prompt_tokens": 2, "completion_tokens": 1}},
        }
        run.exchanges_file(job.id).parent.mkdir(parents=True, exist_ok=True)
        run.exchanges_file(job.id).write_text('{"request": 1}\n[]\n' + json.dumps(good) + "\n")
        shown = node_exchanges(run, [node.id])[node.id]["exchanges"]
        assert [(e["prompt"], e["answer"], e["tokens"]) for e in shown] == [("hi", "ok", 3)]
        collect(run)
