"""The module-level values a ranked line reads, where they are defined (evolve.meta.definitions)."""

from __future__ import annotations

import ast

from evolve.meta.definitions import module_values, with_definitions
from evolve.meta.locations import Location

PARSER = """import re

FENCE = re.compile(r"^```(\\w*)")
LIMIT: int = 3
NAMES = ("a", "b")


def kind(text, LIMIT=2):
    block = FENCE.search(text)
    if block and len(text) > LIMIT:
        return block.group(1)
    return NAMES[0]


LIMIT = 4
"""


def test_a_line_reads_the_modules_values_its_function_does_not_bind_at_their_last_assignment() -> None:
    tree = ast.parse(PARSER)
    assert module_values(tree, 9) == [("FENCE", 3)]
    assert module_values(tree, 10) == []  # its LIMIT is the parameter
    assert module_values(tree, 12) == [("NAMES", 5)]
    assert module_values(tree, 3) == []  # a line at module level reads no function's globals


def test_each_ranked_lines_definitions_come_right_after_it_once_at_its_score(tmp_path) -> None:
    (tmp_path / "agent").mkdir()
    (tmp_path / "agent" / "parse.py").write_text(PARSER)
    ranked = [
        Location("agent/parse.py", 11, 0.9, "ran by the failing test"),
        Location("agent/parse.py", 9, 0.7, "ran by every test"),
        Location("agent/parse.py", 3, 0.5, "e"),
        Location("agent/missing.py", 2, 0.4, "e"),
    ]
    found = with_definitions(tmp_path, ranked)
    # line 9 reads FENCE, bound at line 3, which is ranked already
    assert [(at.line, at.score) for at in found] == [(11, 0.9), (9, 0.7), (3, 0.5), (2, 0.4)]
    (tmp_path / "agent" / "parse.py").write_text(PARSER.replace("return NAMES[0]", "return NAMES[LIMIT]"))
    ranked = [Location("agent/parse.py", 12, 0.9, "e"), Location("agent/parse.py", 9, 0.7, "e")]
    found = with_definitions(tmp_path, ranked)
    assert [(at.line, at.score) for at in found] == [(12, 0.9), (5, 0.9), (9, 0.7), (3, 0.7)]
    assert found[1].evidence == "binds `NAMES` at import, which line 12 reads (e)"
