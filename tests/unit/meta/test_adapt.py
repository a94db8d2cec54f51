"""The `adapt` template (evolve.meta.omissions.adapted): a dead store put back to use in a copy of a sibling
call statement, where every binding of it reaches."""

from __future__ import annotations

import numpy as np

from evolve.meta.templates import edits_at

# `shown` is computed on both paths and never read: the call that handed it on was lost.
SOURCE = """class Chat:
    def open(self, intro):
        self.say("rules", intro)

    def turn(self, action):
        self.say("assistant", action)
        try:
            shown = run(action)
        except OSError as exc:
            shown = str(exc)
        return True
"""
FIXED = SOURCE.replace("        return True\n", "        self.say('rules', shown)\n        return True\n")


def _adapted(line: int) -> list[tuple[int, str, str]]:
    edits = edits_at(SOURCE, line, 60, np.random.default_rng(0), near=False)
    return [(edit.line, edit.change, edit.source) for edit in edits if edit.template == "adapt"]


def test_a_dead_store_is_handed_on_by_a_sibling_call_copied_where_every_binding_reaches() -> None:
    # from the store's line and from the return below it alike; the sibling that reads only bound names
    # (`self.say("assistant", action)`) is no ingredient: nothing of it is missing here
    for line in (10, 11):
        ((at, change, source),) = _adapted(line)
        assert at == 11 and change == "inserted: self.say('rules', shown) (`shown` computed and never read)"
        assert source == FIXED


def test_no_edit_where_the_function_has_no_dead_store_or_the_line_binds_none() -> None:
    assert _adapted(6) == []  # a statement above the stores, not one of them
    used = SOURCE.replace("        return True\n", "        return shown\n")
    edits = edits_at(used, 11, 60, np.random.default_rng(0), near=False)
    assert [edit for edit in edits if edit.template == "adapt"] == []
