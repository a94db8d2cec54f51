"""Arguments passed in the wrong order (evolve.meta.swapped): the source that ranks a call whose arguments
are named as each other's parameters, the `swap` template, and the static lines that carry the source."""

from __future__ import annotations

import ast

import numpy as np

from evolve import syntax
from evolve.engine.spectra import static_lines
from evolve.meta.swapped import SWAPPED_SCORE, Swapped, swapped, swapped_locations
from evolve.meta.templates import edits_at

# `merge(source, target)` called as `merge(target, source)`: the file is merged into the block.
FILES = """def merge(source, target, strict=False):
    return target + source


class Editor:
    def apply(self, source, target):
        return merge(target, source)

    def write(self, path, text):
        return self.save(text, path)

    def save(self, path, text):
        return path, text
"""
FIXED = FILES.replace("return merge(target, source)", "return merge(source, target)")


def test_a_call_passing_arguments_named_as_each_others_parameters_is_found_and_ranked_where_run() -> None:
    tree = syntax.parse(FILES)
    found = swapped("agent/files.py", tree, [tree])
    assert found == [
        Swapped("agent/files.py", 7, "merge(target, source)", "target", "source"),
        Swapped("agent/files.py", 10, "self.save(text, path)", "text", "path"),
    ]
    assert swapped_locations(found, frozenset({("agent/files.py", 2)})) == []
    (location,) = swapped_locations(found, frozenset({("agent/files.py", 7)}))
    assert (location.path, location.line, location.score) == ("agent/files.py", 7, SWAPPED_SCORE)
    assert "passes `target` where its callee takes `source`" in location.evidence


def test_calls_in_order_or_of_callees_defined_otherwise_or_elsewhere_are_not_judged() -> None:
    kept = [
        "def f(a, b):\n    return a\n\n\ndef g(a, b):\n    return f(a, b)\n",  # in order
        "def f(a, b):\n    return a\n\n\ndef g(a, b):\n    return max(b, a)\n",  # not the agent's
        "def f(a, b):\n    return a\n\n\nclass C:\n    def f(self, b, a):\n        return f(b, a)\n",  # two
        "def f(a, b, c):\n    return a\n\n\ndef g(a, c):\n    return f(c, a)\n",  # c is not b's name
    ]
    for source in kept:
        tree = syntax.parse(source)
        assert swapped("agent/m.py", tree, [tree]) == [], source


def test_the_static_lines_carry_it(tmp_path) -> None:
    (tmp_path / "agent").mkdir()
    (tmp_path / "agent" / "files.py").write_text(FILES)
    ranked = static_lines(tmp_path, frozenset({("agent/files.py", 10)}))
    assert [(x.path, x.line) for x in ranked if "may be swapped" in x.evidence] == [("agent/files.py", 10)]


def test_the_swap_template_exchanges_the_named_pair_first_then_neighbours() -> None:
    edits = edits_at(FILES, 7, 60, np.random.default_rng(0), near=False)
    made = [(edit.change, edit.source) for edit in edits if edit.template == "swap"]
    assert [change for change, _ in made] == ["swapped: target <-> source"]
    assert ast.dump(syntax.parse(made[0][1])) == ast.dump(syntax.parse(FIXED))
    three = "def f(x, y, z):\n    return g(x, y, y, z)\n"
    changes = [
        e.change for e in edits_at(three, 2, 60, np.random.default_rng(0), near=False) if e.template == "swap"
    ]
    assert changes == ["swapped: x <-> y", "swapped: y <-> z"]  # equal neighbours are no swap
