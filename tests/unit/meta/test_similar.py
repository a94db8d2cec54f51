"""The `similar` template (evolve.meta.similar) on a tiny agent that is not the seed: a part of an expression
is offered the part its twin elsewhere has there, the twin's locals renamed to this one's; a twin that
differs twice, pairs locals two ways, shares too little or would read a name unbound here lends nothing."""

from __future__ import annotations

import ast

import numpy as np

from evolve.meta.similar import CONTEXT, DEVIANT_SCORE, Deviant, deviant_locations, deviants, similar
from evolve.meta.templates import edits_at

SHELF = '''"""A shelf agent: it cuts rows into windows."""


def offset(row):
    return row.first


def window(rows, start):
    return rows[offset(start) - 1:start.stop]


def cut(items, at):
    return items[offset(at) - 1:offset(at) - 1]
'''


def offers(source: str, line: int, *others: str) -> list[str]:
    """The parts `similar` offers at `line` of `source`, as `old -> new` texts."""
    tree = ast.parse(source)
    donors = [tree, *(ast.parse(text) for text in others)]
    return [
        f"{ast.unparse(m.node)} -> {ast.unparse(m.new)}"
        for node in ast.walk(tree)
        if getattr(node, "lineno", None) == line
        for m in similar(node, tree, donors)
        if m.new is not None
    ]


def line_of(source: str, text: str) -> int:
    (number,) = [n for n, line in enumerate(source.splitlines(), 1) if text in line]
    return number


def test_a_twins_part_is_borrowed_with_its_locals_renamed() -> None:
    assert offers(SHELF, line_of(SHELF, "return items[")) == ["offset(at) - 1 -> at.stop"]
    assert offers(SHELF, line_of(SHELF, "return rows[")) == ["start.stop -> offset(start) - 1"]


def test_the_twin_is_found_in_another_file_too() -> None:
    window, cut = SHELF.split("def cut")
    assert offers("def cut" + cut, 2, window) == ["offset(at) - 1 -> at.stop"]


def test_the_edit_is_made_first_at_its_line_and_the_file_still_parses() -> None:
    edits = edits_at(SHELF, line_of(SHELF, "return items["), 5, np.random.default_rng(0), near=False)
    assert edits[0].template == "similar"
    assert "return items[offset(at) - 1:at.stop]" in edits[0].source
    ast.parse(edits[0].source)


def test_a_twin_that_differs_in_two_places_lends_nothing() -> None:
    source = SHELF.replace("start.stop]", "start.stop + 2]").replace("offset(start) - 1", "offset(start) - 3")
    assert offers(source, line_of(source, "return items[")) == []


def test_an_outside_name_must_be_the_same_name() -> None:
    source = SHELF.replace("rows[offset(start)", "rows[other(start)")
    assert offers(source, line_of(source, "return items[")) == []


def test_locals_pair_one_to_one() -> None:
    two_ways = """def a(p, q):
    return g(p, p) + p.size


def b(x, y):
    return g(x, y) + 1
"""
    assert offers(two_ways, 5) == []  # x and y would both be p
    assert offers(two_ways, 2) == []  # p would be both x and y


def test_a_borrowed_part_reads_only_names_bound_here() -> None:
    source = SHELF.replace("start.stop]", "limit]").replace("(rows, start):", "(rows, start, limit):")
    assert offers(source, line_of(source, "return items[")) == []  # `limit` is no local of `cut`


def test_a_short_twin_lends_nothing() -> None:
    short = "def a(x):\n    return x[0]\n\n\ndef b(y, i):\n    return y[i]\n"
    assert CONTEXT >= 3
    assert offers(short, 2) == [] and offers(short, 6) == []


def test_the_part_borrowed_holds_every_difference() -> None:
    source = "def a(parts, y):\n    return parts[offset(y):len(parts)]\n\n\n"
    source += "def b(items, x):\n    return items[offset(x):offset(x)]\n"
    assert offers(source, 6) == ["offset(x) -> len(items)"]  # its callee and its local both differ
    spread = source.replace("parts[offset(y)", "parts[1 + offset(y)")
    assert offers(spread, 6) == []  # the part holding both differences is the whole slice: too little left


READER = """from pathlib import Path


def size(root, name):
    return len((root / name).read_text("utf-8", "replace"))


def show(root, name):
    return (root / name).read_text("latin-1", "replace").strip()


def lines(root, name):
    return (root / name).read_text("utf-8", "replace").splitlines()
"""


def test_an_expression_its_twins_all_contradict_is_a_deviant_and_ranked_where_a_failing_run_ran_it() -> None:
    trees = {"agent/reader.py": ast.parse(READER)}
    (deviant,) = deviants(trees)
    at = line_of(READER, "latin-1")
    assert deviant == Deviant("agent/reader.py", at, "'latin-1'", "'utf-8'", 2)
    assert deviant_locations([deviant], frozenset()) == []  # no failing run ran it
    (location,) = deviant_locations([deviant], frozenset({("agent/reader.py", at)}))
    assert (location.path, location.line, location.score) == ("agent/reader.py", at, DEVIANT_SCORE)
    assert "2 other places" in location.evidence and "'utf-8'" in location.evidence


def test_twins_that_disagree_among_themselves_make_no_deviant() -> None:
    split = READER.replace(
        'return (root / name).read_text("utf-8", "replace").splitlines()',
        'return (root / name).read_text("ascii", "replace").splitlines()',
    )
    assert deviants({"agent/reader.py": ast.parse(split)}) == []  # utf-8, latin-1, ascii: one each
    one = READER.replace("def lines", "def _lines").replace(
        '"utf-8", "replace").splitlines()', '"latin-1", "replace").splitlines()'
    )
    assert [d.line for d in deviants({"agent/reader.py": ast.parse(one)})] == [line_of(one, "return len(")]


SHELL = """class Shell:
    def __init__(self, box):
        self.box = box
        self.check = ""

    def start(self, check):
        first = self.box.run(check, timeout=30, quiet=True)
        self.check = check
        return first

    def again(self):
        return self.box.run(self.check, timeout=30, quiet=True)

    def last(self):
        return self.box.run(self.check, timeout=30, quiet=True).strip()
"""


def test_a_local_its_function_stores_into_the_field_of_its_name_is_no_deviant_of_that_field() -> None:
    # `check` and `self.check` are one value in `start` (it stores the one into the other)
    assert deviants({"agent/shell.py": ast.parse(SHELL)}) == []
    # with no such store the local contradicts its twins
    loose = SHELL.replace("        self.check = check\n", "")
    (deviant,) = deviants({"agent/shell.py": ast.parse(loose)})
    assert (deviant.part, deviant.usual) == ("check", "self.check")
