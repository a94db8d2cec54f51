"""Where a None the agent crashed on came from, and the template that gives a value-less `return` a value
(evolve.meta.returned)."""

from __future__ import annotations

import ast

import numpy as np

from evolve import syntax
from evolve.meta.crashes import FRAME_STEP
from evolve.meta.evidence import TaskRun
from evolve.meta.returned import RETURN_STEP, none_returns, origins
from evolve.meta.templates import edits_at

HELPERS = """def words(text):
    found = text.split()
    return


def count(text):
    items = words(text)
    return len(items)


def first(text):
    for item in words(text):
        return item


def parts(text):
    if text:
        return text.split(",")
    text = text.strip()


def each(text):
    for part in text:
        yield part
    return
"""


def _crash(line: int, error: str) -> str:
    return (
        "Traceback (most recent call last):\n"
        '  File "/work/agent/__main__.py", line 2, in <module>\n    main()\n'
        f'  File "/work/agent/helpers.py", line {line}, in count\n    x\n'
        f"{error}\n"
    )


def _agent(tmp_path):
    (tmp_path / "agent").mkdir()
    (tmp_path / "agent" / "__main__.py").write_text("from agent.helpers import count\ncount('a b')\n")
    (tmp_path / "agent" / "helpers.py").write_text(HELPERS)
    return tmp_path


NONE_LEN = "TypeError: object of type 'NoneType' has no len()"


def test_the_return_that_gave_the_none_a_crash_read_ranks_just_below_the_raising_frame(tmp_path) -> None:
    code = _agent(tmp_path)
    runs = [
        TaskRun("a", "fail", (), agent_output=_crash(8, NONE_LEN)),
        TaskRun("b", "fail", (), agent_output="no traceback\n"),
        TaskRun("c", "pass", (), agent_output=_crash(8, NONE_LEN)),  # a passing run counts for nothing
    ]
    ranked = none_returns(code, runs)
    assert [(at.path, at.line, at.score) for at in ranked] == [
        ("agent/helpers.py", 3, round(0.5 - RETURN_STEP, 4))
    ]
    assert ranked[0].evidence == (
        "1 of 2 failed evaluations crashed on a value that may be None from here: agent/helpers.py:8 reads "
        f"`items`, bound from `words(...)`, and `words` gives None here ({NONE_LEN})"
    )


def test_an_error_none_cannot_raise_ranks_no_return_and_one_naming_no_type_does(tmp_path) -> None:
    code = _agent(tmp_path)
    for other in ("KeyError: 'items'", "ValueError: invalid literal for int() with base 10: 'a'"):
        assert none_returns(code, [TaskRun("a", "fail", (), agent_output=_crash(8, other))]) == []
    joined = _crash(8, "TypeError: can only join an iterable")  # `"".join(None)`
    assert [at.line for at in none_returns(code, [TaskRun("a", "fail", (), agent_output=joined)])] == [3]


def test_a_call_on_the_raising_line_and_a_body_that_runs_past_its_end_are_origins() -> None:
    trees = {"agent/helpers.py": syntax.parse(HELPERS)}
    # `for item in words(text)`: the call on the line; `parts` returns a value on one path, runs past its end
    # on the other (its last statement, line 19); the generator `each` gives its caller no None
    assert [line for line, _ in origins(trees, [("agent/helpers.py", 12)])] == [("agent/helpers.py", 3)]
    source = (
        HELPERS
        + "\n\ndef use(text):\n    got = parts(text)\n    spread = each(text)\n    return got[0] + spread\n"
    )
    trees = {"agent/helpers.py": syntax.parse(source)}
    found = origins(trees, [("agent/helpers.py", 31)])
    assert [line for line, _ in found] == [("agent/helpers.py", 19)]
    assert "reads `got`, bound from `parts(...)`" in found[0][1]


def test_the_callers_origins_rank_a_frame_step_lower(tmp_path) -> None:
    code = _agent(tmp_path)
    source = (
        HELPERS
        + "\n\ndef size(items):\n    return len(items)\n\n\ndef outer(text):\n    return size(words(text))\n"
    )
    (code / "agent" / "helpers.py").write_text(source)
    crash = (
        "Traceback (most recent call last):\n"
        '  File "/work/agent/helpers.py", line 33, in outer\n    return size(words(text))\n'
        '  File "/work/agent/helpers.py", line 29, in size\n    return len(items)\n'
        f"{NONE_LEN}\n"
    )
    ranked = none_returns(code, [TaskRun("a", "fail", (), agent_output=crash)])
    # line 29 reads only a parameter; its caller, line 33, hands it `words(...)`'s value (`size` is no origin:
    # it returns a value on every path)
    assert [(at.line, at.score) for at in ranked] == [(3, round(1.0 - RETURN_STEP - FRAME_STEP, 4))]


def test_the_returns_template_gives_a_valueless_return_the_nearest_locals_and_a_body_its_missing_return() -> (
    None
):
    rng = np.random.default_rng(0)
    made = [edit for edit in edits_at(HELPERS, 3, 40, rng, near=False) if edit.template == "returns"]
    assert [edit.change for edit in made] == ["return -> return found", "return -> return text"]
    assert "    found = text.split()\n    return found\n" in made[0].source
    ast.parse(made[0].source)
    inserted = [edit for edit in edits_at(HELPERS, 19, 40, rng, near=False) if edit.template == "returns"]
    assert [edit.change for edit in inserted] == ["inserted: return text"]
    assert "    text = text.strip()\n    return text\n" in inserted[0].source
    # a generator's `return` and a value already returned get none
    assert not [edit for edit in edits_at(HELPERS, 25, 40, rng, near=False) if edit.template == "returns"]
    assert not [edit for edit in edits_at(HELPERS, 8, 40, rng, near=False) if edit.template == "returns"]


KINDS = """def names(items: list[str], limit: int) -> list[str]:
    found = []
    for item in items:
        wanted = item.startswith("a") and len(found) < limit
        if wanted:
            found.append(item)
    return
"""


def test_a_return_is_given_locals_of_its_annotated_kind_first_and_none_of_another() -> None:
    made = edits_at(KINDS, 7, 40, np.random.default_rng(0), near=False)
    # `found` is a list as annotated, `items` a list parameter, `item` of no kind read; `wanted` (a bool) and
    # `limit` (an int) are not offered
    assert [edit.change for edit in made if edit.template == "returns"] == [
        "return -> return found",
        "return -> return items",
        "return -> return item",
    ]
