"""Values computed and thrown away (evolve.meta.discarded): the source that ranks a statement dropping the new
value its call computed, the `keep` template that stores it back, and the static lines that carry the
source."""

from __future__ import annotations

import ast

import numpy as np

from evolve import syntax
from evolve.engine.spectra import static_lines
from evolve.meta.discarded import DISCARDED_SCORE, Discarded, discarded, discarded_locations
from evolve.meta.templates import edits_at

# `text = text.strip()` lost its assignment: the reply is parsed with its blank lines.
READ = """import os


class Reader:
    def read(self, text, items):
        text.strip()
        sorted(items)
        self.name.lower()
        return text, items
"""
FIXED = READ.replace("        text.strip()\n", "        text = text.strip()\n")


def test_a_statement_that_drops_the_value_its_call_computed_is_found_and_ranked_where_a_failing_run_ran_it():
    found = discarded("agent/read.py", syntax.parse(READ))
    assert found == [
        Discarded("agent/read.py", 6, "text", "text.strip()"),
        Discarded("agent/read.py", 7, "items", "sorted(items)"),
        Discarded("agent/read.py", 8, "self.name", "self.name.lower()"),
    ]
    assert discarded_locations(found, frozenset({("agent/read.py", 9)})) == []
    (location,) = discarded_locations(found, frozenset({("agent/read.py", 6)}))
    assert (location.path, location.line, location.score) == ("agent/read.py", 6, DISCARDED_SCORE)
    assert "`text` is unchanged after it" in location.evidence


def test_calls_that_act_or_answer_are_not_judged() -> None:
    kept = [
        "import os\n\n\ndef save(a, b):\n    os.replace(a, b)\n",  # a module's function
        "def move(path, target):\n    path.replace(target)\n",  # Path.replace: one argument
        "def edit(ws, old, new):\n    ws.replace('a.py', old, new)\n",  # a count that is no number
        "def wait(thread):\n    thread.join()\n",
        "def check(text):\n    text.startswith('x')\n    text.encode('ascii')\n",  # a verdict, a validation
        "def keep(text):\n    text = text.strip()\n    return text\n",
    ]
    for source in kept:
        assert discarded("agent/m.py", syntax.parse(source)) == [], source
    counted = "def f(text):\n    text.replace('a', 'b', 1)\n"
    assert [item.line for item in discarded("agent/m.py", syntax.parse(counted))] == [2]


def test_the_static_lines_carry_it(tmp_path) -> None:
    (tmp_path / "agent").mkdir()
    (tmp_path / "agent" / "read.py").write_text(READ)
    ranked = static_lines(tmp_path, frozenset({("agent/read.py", 7)}))
    assert [(x.path, x.line) for x in ranked if "drops it" in x.evidence] == [("agent/read.py", 7)]


def test_the_keep_template_stores_the_value_back_where_it_came_from() -> None:
    edits = edits_at(READ, 6, 60, np.random.default_rng(0), near=False)
    made = [(edit.change, edit.source) for edit in edits if edit.template == "keep"]
    assert [change for change, _ in made] == ["kept: text = text.strip()"]
    assert ast.dump(syntax.parse(made[0][1])) == ast.dump(syntax.parse(FIXED))
    attribute = edits_at(READ, 8, 60, np.random.default_rng(0), near=False)
    assert "        self.name = self.name.lower()\n" in [e.source.splitlines(True)[7] for e in attribute]
