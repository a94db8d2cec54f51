"""Statements no run can reach (evolve.meta.reach): the source that ranks the statement cutting them off,
the `reach` template that puts it back under a condition, and the static lines that carry the source."""

from __future__ import annotations

import ast

import numpy as np

from evolve import syntax
from evolve.engine.spectra import static_lines
from evolve.meta.reach import UNREACHABLE_SCORE, Unreachable, unreachable, unreachable_locations
from evolve.meta.templates import edits_at

# `if quiet:` was lost above `return "quiet"`: the two cases below it never run.
LEVEL = """def level(quiet, verbose):
    if quiet and verbose:
        raise ValueError("both")
    return "quiet"
    if verbose:
        return "verbose"
    return "normal"
"""
FIXED = LEVEL.replace('    return "quiet"\n', '    if quiet:\n        return "quiet"\n')


def test_the_statement_that_cuts_off_others_is_found_and_ranked_where_a_failing_run_ran_it() -> None:
    (found,) = unreachable("agent/level.py", syntax.parse(LEVEL))
    assert found == Unreachable("agent/level.py", 4, 5, 7, "level")
    assert unreachable_locations([found], frozenset({("agent/level.py", 2)})) == []
    (location,) = unreachable_locations([found], frozenset({("agent/level.py", 4)}))
    assert (location.path, location.line, location.score) == ("agent/level.py", 4, UNREACHABLE_SCORE)
    assert "lines 5-7 after it (in `level`) never run" in location.evidence


def test_code_kept_after_an_end_on_purpose_and_blocks_outside_functions_are_not_judged() -> None:
    kept = [
        "def stub():\n    raise NotImplementedError\n    yield b''\n",  # a generator that only raises
        "def todo():\n    return None\n    pass\n",
        "def loop(items):\n    for item in items:\n        continue\n    return items\n",  # last of its block
        "for item in range(3):\n    break\n    print(item)\n",  # a module's block
        "def outer():\n    def inner():\n        return 1\n    return inner\n",
    ]
    for source in kept:
        assert unreachable("agent/m.py", syntax.parse(source)) == [], source
    nested = "def outer():\n    def inner():\n        return 1\n        print(2)\n    return inner\n"
    assert [item.function for item in unreachable("agent/m.py", syntax.parse(nested))] == ["inner"]


def test_the_static_lines_carry_it(tmp_path) -> None:
    (tmp_path / "agent").mkdir()
    (tmp_path / "agent" / "level.py").write_text(LEVEL)
    ranked = static_lines(tmp_path, frozenset({("agent/level.py", 4)}))
    assert [(x.path, x.line) for x in ranked if "never run" in x.evidence] == [("agent/level.py", 4)]


def _reached(source: str, line: int) -> list[tuple[str, str]]:
    edits = edits_at(source, line, 60, np.random.default_rng(0), near=False)
    return [(edit.change, edit.source) for edit in edits if edit.template == "reach"]


def test_the_reach_template_puts_the_statement_under_each_nearby_condition_operands_first() -> None:
    made = _reached(LEVEL, 4)
    assert [change for change, _ in made] == [
        "guarded: if verbose: return 'quiet'",
        "guarded: if quiet: return 'quiet'",
        "guarded: if quiet and verbose: return 'quiet'",
    ]
    assert ast.dump(syntax.parse(made[1][1])) == ast.dump(syntax.parse(FIXED))


def test_no_reach_edit_where_nothing_is_cut_off_or_a_condition_reads_a_name_not_yet_bound() -> None:
    assert _reached(FIXED, 5) == []
    late = LEVEL.replace("    if verbose:\n", "    loud = verbose\n    if loud:\n")
    assert [change for change, _ in _reached(late, 4)] == [
        "guarded: if quiet: return 'quiet'",
        "guarded: if verbose: return 'quiet'",
        "guarded: if quiet and verbose: return 'quiet'",
    ]  # `loud` is bound only below the statement
