import subprocess
import sys
import textwrap

import pytest

from evolve.archive import evaluations_frame, nodes_frame


def test_frames_hold_nodes_and_evaluations(run, code):
    root = run.add_node(code({"a.py": "0\n"}))
    child = run.add_node(code({"a.py": "1\n"}), parent=root.id, origin="self_modify")
    run.record_evaluation(child.id, "t1", "pass", duration_s=2.0)
    run.record_evaluation(child.id, "t2", "fail")
    run.record_evaluation(root.id, "t1", "infra")
    nodes = nodes_frame(run)
    assert list(nodes.index) == ["0", "1"]
    assert nodes.loc["1", "pass_rate"] == 0.5 and nodes.loc["1", "parent"] == "0"
    assert nodes.loc["0", "clade_successes"] == 1 and nodes.loc["0", "successes"] == 0
    assert nodes.loc["1", "depth"] == 1 and nodes.loc["0", "children"] == 1
    evaluations = evaluations_frame(run)
    assert len(evaluations) == 3
    assert evaluations.groupby("node", observed=True)["outcome"].count().to_dict() == {"0": 1, "1": 2}
    assert evaluations["outcome"].value_counts()["infra"] == 1


def test_notebook_style_snippet_loads_a_run(run, code):
    node = run.add_node(code({"a.py": "0\n"}))
    run.record_evaluation(node.id, "t1", "pass")
    snippet = textwrap.dedent(f"""
        import evolve.archive as a, pandas
        nodes = a.nodes_frame({str(run.path)!r})
        evals = a.evaluations_frame({str(run.path)!r})
        assert isinstance(nodes, pandas.DataFrame) and len(nodes) == 1
        print(evals.pivot_table(index="node", columns="task", values="attempt", aggfunc="count").to_dict())
    """)
    out = subprocess.run([sys.executable, "-c", snippet], capture_output=True, text=True, check=True)
    assert "{'t1': {'0': 1}}" in out.stdout


def test_evaluations_frame_holds_the_records_whatever_is_missing(run, code):
    """The frame is read as Arrow columns: each column keeps its type when every row lacks it (no log,
    no duration), when the run has no evaluations, and the values are the records'."""
    empty = evaluations_frame(run)
    assert (
        len(empty) == 0 and str(empty["task"].dtype) == "str" and str(empty["duration_s"].dtype) == "float64"
    )
    root = run.add_node(code({"a.py": "0\n"}))
    run.record_evaluation(root.id, "t1", "fail")
    run.record_evaluation(root.id, "t2", "timeout", duration_s=3.5, tokens=7, log_path="logs/job-2")
    frame = evaluations_frame(run)
    assert frame["log_path"].isna().tolist() == [True, False] and frame["duration_s"].isna().tolist() == [
        True,
        False,
    ]
    for record in run.evaluations(root.id):
        row = frame.loc[record.id]
        assert (row["node"], row["task"], row["attempt"], row["outcome"], row["tokens"], row["split"]) == (
            record.node,
            record.task,
            record.attempt,
            record.outcome.value,
            record.tokens,
            record.split.value,
        )
        assert row["created"].timestamp() == pytest.approx(record.created, abs=1e-6)
