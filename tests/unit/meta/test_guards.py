"""What decides whether a ranked line runs (evolve.meta.guards), and the ranking that takes them in
(evolve.meta.locate)."""

from __future__ import annotations

import ast

from evolve.meta.guards import GUARDS, deciding, guards
from evolve.meta.locate import locate
from evolve.meta.locations import Location

CHOOSER = """def check(root, names, tests):
    examples = [n for n in names if ">>>" not in (root / n).read_text()]
    if tests and examples:
        return "pytest --doctest-modules"
    if tests:
        return "pytest"
    if examples:
        return "doctest " + " ".join(examples)
    return "compileall"


def loop(items, limit):
    seen = 0
    for item in items:
        if item is None:
            continue
        while seen < limit:
            if item > 3:
                seen += item
            else:
                seen += 1
    return seen
"""


def _agent(tmp_path):
    (tmp_path / "agent").mkdir()
    (tmp_path / "agent" / "checks.py").write_text(CHOOSER)
    return tmp_path


def test_the_leaving_ifs_before_a_line_decide_it_nearest_first() -> None:
    assert [test.lineno for test in guards(ast.parse(CHOOSER), 9)] == [7, 5, 3]


def test_the_statements_holding_a_line_decide_it_innermost_first() -> None:
    tree = ast.parse(CHOOSER)
    assert [test.lineno for test in guards(tree, 21)] == [18, 17, 15]  # the else of line 18's test
    assert [test.lineno for test in guards(tree, 18)] == [17, 15]  # a test is not its own guard
    assert guards(tree, 13) == []  # nothing above the first statement decides it
    assert len(guards(tree, 19)) == GUARDS


def test_guards_and_the_bindings_they_test_rank_below_the_line_they_decide(tmp_path) -> None:
    code = _agent(tmp_path)
    found = deciding(code, [Location("agent/checks.py", 9, 1.0, "its check passed, the task failed")])
    assert [(loc.line, loc.score) for loc in found] == [
        (7, 0.5),
        (2, 0.49),  # `examples`, bound above the test on line 7
        (5, 0.48),  # `tests` is a parameter: bound by the caller, not ranked
        (3, 0.46),
        (2, 0.45),
    ]
    assert "decides whether line 9 runs" in found[0].evidence
    assert "binds examples" in found[1].evidence


def test_only_the_head_of_the_ranking_gets_guards_and_no_file_outside_the_agent(tmp_path) -> None:
    code = _agent(tmp_path)
    head = [Location("agent/checks.py", 13, 1.0, "a"), Location("agent/other.py", 9, 0.9, "b")]
    assert deciding(code, [*head, Location("agent/checks.py", 9, 0.8, "c")], heads=2) == []


def test_locate_ranks_the_guards_of_its_head_below_it(tmp_path) -> None:
    code = _agent(tmp_path)
    ranked = [Location("agent/checks.py", 9, 1.0, "its check passed, the task failed")]
    found = locate(code, [], ranked=[ranked])
    assert [(loc.line, loc.score) for loc in found] == [(9, 1.0), (7, 0.5), (2, 0.49), (5, 0.48), (3, 0.46)]
    assert "binds examples, which the test on line 3 reads" in found[2].evidence  # both bindings' evidence
