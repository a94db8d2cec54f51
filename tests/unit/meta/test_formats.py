"""Arguments a format string drops (evolve.meta.formats): the source that ranks the string, the `placeholder`
template that gives it the field back, and the static lines that carry the source."""

from __future__ import annotations

import ast

import numpy as np

from evolve import syntax
from evolve.engine.spectra import static_lines
from evolve.meta.formats import DROPPED_SCORE, Dropped, dropped, dropped_locations
from evolve.meta.templates import edits_at

# `NOTE` lost its `{detail}` field: the value `report` computes is passed and never shown.
TEXTS = 'HEADER = "Report for {who}:\\n"\nNOTE = "Status: {status}"\n'
REPORT = """import texts


def report(who, status, detail):
    head = texts.HEADER.format(who=who)
    return head + texts.NOTE.format(status=status, detail=detail)
"""
FIXED = TEXTS.replace("{status}", "{status}{detail}")


def _trees(**files: str) -> dict[str, ast.Module]:
    return {f"agent/{name}.py": syntax.parse(text) for name, text in files.items()}


def test_a_keyword_the_string_has_no_field_for_is_found_in_the_module_that_binds_the_string() -> None:
    (found,) = dropped(_trees(texts=TEXTS, report=REPORT))
    assert found == Dropped("agent/texts.py", 2, "NOTE", ("agent/report.py", 6), ("detail",))
    # the call's own literal receiver is the string too
    inline = "def show(n, total):\n    return 'Done: {n}'.format(n=n, total=total)\n"
    assert dropped(_trees(show=inline)) == [
        Dropped("agent/show.py", 2, None, ("agent/show.py", 2), ("total",))
    ]


def test_nothing_is_judged_where_the_string_or_the_keyword_is_not_said() -> None:
    fields_elsewhere = '"{a.b} {c[0]} {d:{e}}".format(a=1, c=2, d=3, e=4)'
    not_judged = [
        'x = "{a}".format(a=1, **extra)',  # what `**` passes is unknown; nothing passed by name is dropped
        '"{} {}".format(1, 2, 3)',  # positional arguments
        fields_elsewhere,  # an attribute, an item, a nested spec: each a use
        '"{a".format(a=1)',  # no valid format string
        "TEXT.format(a=1)",  # TEXT is bound twice (below)
    ]
    source = "TEXT = '{b}'\nTEXT = '{c}'\n" + "\n".join(not_judged) + "\n"
    assert dropped(_trees(m=source)) == []
    # a name two other modules bind: which string it formats is unsaid
    caller = "import a\nimport b\n\nprint(a.NOTE.format(x=1))\n"
    assert dropped(_trees(a='NOTE = "{y}"\n', b='NOTE = "{z}"\n', caller=caller)) == []


def test_the_strings_line_is_ranked_where_a_failing_run_ran_the_call() -> None:
    found = dropped(_trees(texts=TEXTS, report=REPORT))
    assert dropped_locations(found, frozenset({("agent/report.py", 5)})) == []
    (location,) = dropped_locations(found, frozenset({("agent/report.py", 6)}))
    assert (location.path, location.line, location.score) == ("agent/texts.py", 2, DROPPED_SCORE)
    assert "`NOTE` is formatted at agent/report.py:6 with `detail=`" in location.evidence


def test_the_static_lines_carry_it(tmp_path) -> None:
    (tmp_path / "agent").mkdir()
    (tmp_path / "agent" / "texts.py").write_text(TEXTS)
    (tmp_path / "agent" / "report.py").write_text(REPORT)
    ranked = static_lines(tmp_path, frozenset({("agent/report.py", 6)}))
    assert [(x.path, x.line) for x in ranked if "no field" in x.evidence] == [("agent/texts.py", 2)]


def _placeholders(source: str, line: int, *elsewhere: str) -> list[str]:
    edits = edits_at(source, line, 60, np.random.default_rng(0), list(elsewhere), near=False)
    return [edit.source for edit in edits if edit.template == "placeholder"]


def _first_value(source: str) -> object:
    statement = syntax.parse(source).body[0]
    assert isinstance(statement, ast.Assign)
    return ast.literal_eval(statement.value)


def test_the_placeholder_template_gives_the_string_its_field_back_first() -> None:
    edits = _placeholders(TEXTS, 2, REPORT)
    assert ast.dump(syntax.parse(edits[0])) == ast.dump(syntax.parse(FIXED))
    # then at the other places a field is likeliest lost: an empty line, before the first field
    text = 'ASK = "Task:\\n\\n{files}\\n\\nAnswer."\n'
    caller = "from texts import ASK\n\n\ndef ask(files, p):\n    return ASK.format(files=files, problem=p)\n"
    values = [_first_value(edit) for edit in _placeholders(text, 1, caller)]
    assert values == [
        "Task:\n\n{files}{problem}\n\nAnswer.",
        "Task:\n\n{files}\n\nAnswer.{problem}",
        "Task:\n{problem}\n{files}\n\nAnswer.",
        "Task:\n\n{files}\n{problem}\nAnswer.",
    ]


def test_no_placeholder_where_no_call_drops_a_keyword_or_another_module_binds_the_name() -> None:
    assert _placeholders(FIXED, 2, REPORT) == []
    assert _placeholders(TEXTS, 1, REPORT) == []  # HEADER: every keyword has its field
    # the caller formats a NOTE of its own
    own = REPORT.replace("import texts\n", "import texts\n\nNOTE = 'Status: {status}'\n")
    assert _placeholders(TEXTS, 2, own.replace("texts.NOTE", "NOTE")) == []
