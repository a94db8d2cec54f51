import json
import subprocess
import sys

import pytest
from scipy import stats

from evolve.archive.compare import compare, counted_outcomes
from evolve.errors import EvolveError


def test_paired_comparison_counts_discordant_tasks_and_intervals():
    a = {f"t{i}": i < 20 for i in range(40)}  # A passes t0..t19
    b = {f"t{i}": 5 <= i < 30 for i in range(40)}  # B loses t0..t4, gains t20..t29
    result = compare(a, b)
    assert (result.a.passed, result.b.passed, result.tasks) == (20, 25, 40)
    assert result.only_a == [f"t{i}" for i in range(5)] and len(result.only_b) == 10
    assert result.difference.mean == pytest.approx(5 / 40)
    assert result.difference.low < 0 < result.difference.high  # 5 of 15 discordant: not significant
    assert result.mcnemar_p == pytest.approx(stats.binomtest(10, 15, 0.5).pvalue)
    # Wilson, 20/40
    assert (result.a.interval.low, result.a.interval.high) == pytest.approx((0.352, 0.648), abs=1e-3)


def test_only_tasks_both_sides_counted_are_paired():
    result = compare({"t1": True, "t2": False, "t3": True}, {"t1": True, "t2": True, "t4": False})
    assert result.tasks == 2 and result.unpaired == 2 and result.mcnemar_p == 1.0
    with pytest.raises(EvolveError, match="no counted task in common"):
        compare({"t1": True}, {"t2": True})


def test_first_counted_result_per_task_infra_never(run, code):
    node = run.add_node(code({"a.py": "0\n"}))
    run.record_evaluation(node.id, "t1", "infra")
    run.record_evaluation(node.id, "t1", "fail")
    run.record_evaluation(node.id, "t1", "pass")
    run.record_evaluation(node.id, "t2", "pass", split="heldout")
    assert counted_outcomes(run, node.id) == {"t1": False, "t2": True}
    assert counted_outcomes(run, node.id, split="heldout") == {"t2": True}


def test_cli_compares_two_eval_runs_and_names_an_ambiguous_run(tmp_path, code):
    from evolve.archive.store import Run

    paths = []
    for name, passes in (("old", {"t1", "t2"}), ("new", {"t2", "t3"})):
        with Run.create(tmp_path / name) as made:
            node = made.add_node(code({"a.py": name}))
            for task in ("t1", "t2", "t3", "t4"):
                made.record_evaluation(node.id, task, "pass" if task in passes else "fail")
            paths.append(made.path)
    out = subprocess.run(
        [sys.executable, "-m", "evolve", "compare", *map(str, paths), "--json"],
        capture_output=True,
        text=True,
        check=True,
    )
    result = json.loads(out.stdout)
    assert result["a"]["passed"] == 2 and result["b"]["passed"] == 2 and result["tasks"] == 4
    assert result["only_a"] == ["t1"] and result["only_b"] == ["t3"]
    text = subprocess.run(
        [sys.executable, "-m", "evolve", "compare", f"{paths[0]}:0", str(paths[1])],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "paired over 4 tasks: B − A = +0.000" in text and "exact McNemar p = 1" in text
    with Run.open(paths[0], writer=True) as opened:
        opened.add_node(code({"a.py": "2"}), parent="0", origin="self_modify")
    refused = subprocess.run(
        [sys.executable, "-m", "evolve", "compare", *map(str, paths)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert refused.returncode != 0 and "the run has 2 nodes; name one as RUN:NODE" in refused.stderr
    test = subprocess.run(
        [sys.executable, "-m", "evolve", "compare", f"{paths[0]}:0", str(paths[1]), "--split", "test"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert test.returncode == 1 and test.stderr.strip() == (
        "error: --split test: no such split (the splits are dev, heldout)"
    )


def test_final_names_the_runs_final_agent_and_the_same_agent_on_both_sides_is_said(tmp_path, code):
    """`evolve compare RUN:0 RUN:final` as the issue writes it: `final` is the run's final agent (the rule's
    choice); where that is the seed, the comparison says the two sides are one agent."""
    from evolve.archive.store import Run

    with Run.create(tmp_path / "run") as made:
        seed = made.add_node(code({"a.py": "0"}))
        child = made.add_node(code({"a.py": "1"}), parent=seed.id, origin="self_modify")
        for node, passes in ((seed.id, 1), (child.id, 5)):
            for n in range(6):
                made.record_evaluation(node, f"t{n}", "pass" if n < passes else "fail")
    evolve = [sys.executable, "-m", "evolve"]
    out = subprocess.run(
        [*evolve, "compare", f"{made.path}:0", f"{made.path}:final", "--json"],
        capture_output=True,
        text=True,
        check=True,
    )
    result = json.loads(out.stdout)
    assert (result["a"]["passed"], result["b"]["passed"], result["same_agent"]) == (1, 5, False)
    assert (
        "node 1  (valid)"
        in subprocess.run(
            [*evolve, "show", made.path, "FINAL"], capture_output=True, text=True, check=True
        ).stdout
    )
    with Run.open(made.path, writer=True) as opened:
        for n in range(6, 40):  # the seed's evidence grows until the rule prefers it
            opened.record_evaluation(seed.id, f"t{n}", "pass")
    text = subprocess.run(
        [*evolve, "compare", f"{made.path}:0", f"{made.path}:final"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert text.startswith(f"A and B are the same agent: node 0 of {made.path.resolve()}\n")
    missing = subprocess.run(
        [*evolve, "compare", f"{made.path}:0", f"{made.path}:finale"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert missing.returncode == 1 and "has no node 'finale'" in missing.stderr


@pytest.mark.parametrize(
    ("a", "b"),
    [
        (
            {"t1": True, "t2": True},
            {"t1": True, "t2": True},
        ),  # identical on 2 tasks: was a zero-width [+0, +0]
        ({"t1": False, "t2": True}, {"t1": True, "t2": True}),
        ({"t1": False, "t2": False}, {"t1": True, "t2": True}),
        (
            {"t1": True, "t2": False, "t3": False},
            {"t1": True, "t2": True, "t3": True},
        ),  # was [-1.101, +1.768]
    ],
)
def test_a_paired_interval_on_a_few_tasks_stays_within_minus_one_and_one_and_is_never_zero_width(a, b):
    d = compare(a, b).difference
    assert -1 <= d.low < d.mean < d.high <= 1 or (-1 <= d.low < d.high <= 1 and d.mean in (d.low, d.high))
    assert d.low < d.high
    assert compare(a, b).small_sample_note() is not None  # 2 or 3 tasks cannot tell two agents apart


def test_the_paired_interval_is_newcombes():
    from evolve.stats import paired_difference_ci95

    # Hand-computed from Newcombe's method 10 (Wilson 95 % limits and the corrected phi): 2 pairs, one
    # discordant for B: B 2/2 [0.342, 1], A 1/2 [0.095, 0.905], phi = 0, so
    # low = 0.5 - sqrt((1 - 0.342)^2 + (0.905 - 0.5)^2), high = 0.5 + sqrt(0 + (0.5 - 0.095)^2).
    d = paired_difference_ci95(both=1, only_a=0, only_b=1, neither=0)
    assert (d.mean, d.low, d.high) == pytest.approx((0.5, -0.2726, 0.9055), abs=1e-3)
    many = paired_difference_ci95(both=40, only_a=5, only_b=15, neither=40)
    assert many.low > 0 and many.high < 0.2 + 0.15  # 15 vs 5 discordant of 100: a real gain, and narrow
    gained = compare({f"t{i}": i < 5 for i in range(20)}, {f"t{i}": True for i in range(20)})
    assert gained.small_sample_note() is None  # 15 discordant tasks: enough to tell them apart
