"""The model repair's pure part: the unit around a ranked line, the conversation it is asked in, and its
rewrite spliced back (evolve.meta.repair)."""

from __future__ import annotations

from evolve.meta.locations import Location
from evolve.meta.repair import (
    Attempt,
    line_messages,
    line_spliced,
    repair_messages,
    reply_code,
    source_of_test,
    spliced,
    unit_at,
)

SOURCE = """import re

PATTERN = re.compile(
    r"x+",
)


class Reader:
    def first(self, text):
        found = PATTERN.findall(text)
        if found:
            return found[0]
        return None

    def count(self, text):
        return len(PATTERN.findall(text))
"""


def line_of(text: str) -> int:
    return SOURCE.splitlines().index(text) + 1


def test_the_unit_is_the_innermost_function_else_the_statement_at_the_line():
    unit = unit_at("a.py", SOURCE, line_of("            return found[0]"))
    assert unit is not None and unit.name == "first" and unit.indent == "    "
    assert (unit.start, unit.end) == (line_of("    def first(self, text):"), line_of("        return None"))
    statement = unit_at("a.py", SOURCE, line_of('    r"x+",'))
    assert statement is not None and statement.name is None
    assert statement.text == 'PATTERN = re.compile(\n    r"x+",\n)'
    narrowed = unit_at("a.py", SOURCE, line_of("            return found[0]"), max_lines=3)
    assert narrowed is not None and narrowed.name is None and narrowed.text.lstrip().startswith("if found")
    assert unit_at("a.py", SOURCE, 2) is None and unit_at("a.py", "def (:\n", 1) is None


def test_a_methods_rewrite_is_spliced_at_its_indentation_and_the_rest_is_kept():
    unit = unit_at("a.py", SOURCE, line_of("            return found[0]"))
    assert unit is not None
    reply = (
        "Here is the fix:\n```python\nimport re\n\ndef first(self, text):\n"
        "    found = PATTERN.findall(text)\n    return found[-1] if found else None\n```\nThe last."
    )
    text, why = spliced(SOURCE, unit, reply)
    assert why == "" and text is not None
    assert "        return found[-1] if found else None\n\n    def count(self, text):" in text
    assert text.startswith("import re\n\nPATTERN") and text.count("import re") == 1


def test_a_reply_without_the_function_or_without_code_is_refused_with_the_reason():
    unit = unit_at("a.py", SOURCE, line_of("            return found[0]"))
    assert unit is not None
    assert spliced(SOURCE, unit, "```python\ndef other():\n    pass\n```") == (
        None,
        "the reply's code defines no function `first`",
    )
    assert spliced(SOURCE, unit, "I cannot see a bug (here).") == (
        None,
        "the reply held no Python code that parses",
    )
    assert reply_code("```\nx = 1\n```") == "x = 1\n" and reply_code("    y = 2\n") == "y = 2\n"


def test_a_statements_rewrite_replaces_those_lines_only():
    unit = unit_at("a.py", SOURCE, line_of('    r"x+",'))
    assert unit is not None
    text, _ = spliced(SOURCE, unit, '```python\nPATTERN = re.compile(r"x+", re.MULTILINE)\n```')
    assert text == SOURCE.replace(
        'PATTERN = re.compile(\n    r"x+",\n)', 'PATTERN = re.compile(r"x+", re.MULTILINE)'
    )


def test_each_next_attempt_is_told_the_earlier_replies_and_why_they_were_refused():
    line = line_of("        if found:")
    unit = unit_at("a.py", SOURCE, line)
    assert unit is not None
    location = Location("a.py", line, 0.9, "ran by 2 failing own tests and no passing one")
    first = repair_messages(unit, location, [], "the reader returns nothing")
    assert [m["role"] for m in first] == ["system", "user"]
    asked = first[1]["content"]
    assert "def first(self, text):\n    found" in asked and f"line {line}" in asked and "`if found:`" in asked
    assert location.evidence in asked and "the reader returns nothing" in asked
    tried = Attempt(
        "```python\ndef first(self, text):\n    return None\n```", "own tests", "x" * 5000 + "E assert 1"
    )
    again = repair_messages(unit, location, [tried])
    assert [m["role"] for m in again] == ["system", "user", "assistant", "user"]
    assert again[2]["content"] == tried.reply
    assert "refused at `own tests`" in again[3]["content"] and again[3]["content"].count("x") < 1000
    assert "E assert 1" in again[3]["content"]


TESTS = """import pytest


def test_first_finds_the_first():
    assert Reader().first("xx y x") == "xx"


class TestCount:
    @pytest.mark.parametrize("text", ["x", "y"])
    def test_count(self, text):
        assert Reader().count(text) >= 0
"""


def test_a_failing_test_is_found_by_its_pytest_id_and_shown_with_the_unit():
    assert source_of_test(TESTS, "tests/test_r.py::test_first_finds_the_first") == (
        'def test_first_finds_the_first():\n    assert Reader().first("xx y x") == "xx"'
    )
    method = source_of_test(TESTS, "tests/test_r.py::TestCount::test_count[x]")
    assert method is not None and method.startswith('@pytest.mark.parametrize("text", ["x", "y"])')
    assert "def test_count(self, text):" in method
    assert source_of_test(TESTS, "tests/test_r.py::test_missing") is None
    assert source_of_test(TESTS, "tests/test_r.py") is None and source_of_test("def (", "a.py::t") is None
    assert source_of_test(TESTS, "t.py::test_first_finds_the_first", max_lines=1).endswith("\n    ...")
    line = line_of("        if found:")
    unit = unit_at("a.py", SOURCE, line)
    assert unit is not None
    evidence = "run by 1 of 1 failing own tests; failing there: tests/test_r.py::test_first_finds_the_first"
    location = Location("a.py", line, 0.9, evidence, ("tests/test_r.py::test_first_finds_the_first",))
    shown = source_of_test(TESTS, location.tests[0]) or ""
    asked = repair_messages(unit, location, [], problem="failing there", test=shown)[1]["content"]
    assert "A failing test that runs it (tests/test_r.py::test_first_finds_the_first):" in asked
    assert shown in asked and "The problem seen" not in asked  # the evidence says it already


def test_a_locations_failing_tests_travel_as_json_and_a_bad_list_is_dropped():
    location = Location("a.py", 3, 0.5, "e", ("tests/t.py::test_a",))
    assert Location.from_json(location.to_json()) == location
    assert "tests" not in Location("a.py", 3, 0.5, "e").to_json()
    assert Location.from_json({"path": "a.py", "line": 3, "score": 1, "evidence": "e", "tests": "x"}) == (
        Location("a.py", 3, 1.0, "e")
    )


def test_a_line_repair_is_asked_about_the_numbered_line_and_its_reply_replaces_that_line_alone():
    line = line_of("        if found:")
    unit = unit_at("a.py", SOURCE, line)
    assert unit is not None
    location = Location("a.py", line, 0.8, "run by 2 of 2 failing tests", tests=("tests/t.py::test_first",))
    system, user = line_messages(
        unit, location, problem="first() returns the wrong match", test="def test_first(): ..."
    )
    assert system["role"] == "system" and "one line at a time" in system["content"]
    asked = user["content"]
    assert f"{line}          if found:" in asked and f"{line + 1}              return found[0]" in asked
    assert f"Write line {line} as it should be" in asked and location.evidence in asked
    assert "def test_first(): ..." in asked and "first() returns the wrong match" in asked
    # the line as the model copied it, number included, at any indentation: the line alone changes
    text, why = line_spliced(SOURCE, line, f"```python\n{line}  if len(found) > 1:\n```")
    assert why == "" and text is not None
    assert text.splitlines()[line - 1] == "        if len(found) > 1:"
    assert text.splitlines()[: line - 1] == SOURCE.splitlines()[: line - 1]
    assert text.splitlines()[line:] == SOURCE.splitlines()[line:]
    # the line and the one missing after it
    added, why = line_spliced(SOURCE, line, "```python\n    if found:\n        found.sort()\n```")
    assert why == "" and added is not None
    assert added.splitlines()[line - 1 : line + 2] == [
        "        if found:",
        "            found.sort()",
        "            return found[0]",
    ]


def test_a_line_repair_that_changes_nothing_breaks_the_file_or_rewrites_more_is_refused_with_the_reason():
    line = line_of("        if found:")
    assert line_spliced(SOURCE, line, "```python\nif found:\n```") == (
        None,
        f"the reply wrote line {line} as it stands",
    )
    assert line_spliced(SOURCE, line, "```python\nif found\n```")[1].startswith(
        "the file does not parse with the reply's line in place"
    )
    assert line_spliced(SOURCE, line, "```python\na = 1\nb = 2\nc = 3\nd = 4\n```")[1] == (
        "the reply held 4 lines, not the line (and one missing after it)"
    )
    assert line_spliced(SOURCE, line, "```python\n\n```") == (None, "the reply held no line")
    # the lines after it copied as they stand add nothing: the line alone is written
    copied = f"```python\n{line}  if len(found) > 1:\n{line + 1}      return found[0]\n```"
    assert line_spliced(SOURCE, line, copied)[0] == line_spliced(SOURCE, line, "if len(found) > 1:")[0]
    assert line_spliced(SOURCE, line, "if found:\n    return found[0]") == (
        None,
        f"the reply wrote line {line} as it stands",
    )
    assert line_spliced(SOURCE, 999, "x = 1") == (None, "the file has no line 999")
    # a number that is not the line's stays: the reply is taken as written (here it does not parse)
    assert line_spliced(SOURCE, line, f"{line + 5}  if found:")[0] is None


def test_a_later_line_repair_is_told_the_earlier_replies_and_how_each_was_refused():
    line = line_of("        if found:")
    unit = unit_at("a.py", SOURCE, line)
    assert unit is not None
    location = Location("a.py", line, 0.8, "run by 2 of 2 failing tests")
    earlier = [
        Attempt("```python\nif not found:\n```", "tests", "the agent's own tests fail: ... AssertionError"),
        Attempt("```python\nif found:\n```", "applies", "the reply wrote line 28 as it stands"),
    ]
    messages = line_messages(unit, location, earlier)
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "user", "assistant", "user"]
    assert messages[2]["content"] == earlier[0].reply and messages[4]["content"] == earlier[1].reply
    assert messages[3]["content"].startswith(
        "That change was tried and refused at `tests`: the agent's own tests fail: ... AssertionError"
    )
    assert f"Write line {line} differently" in messages[5]["content"]
    assert messages[:2] == line_messages(unit, location)


def test_a_line_repair_that_rewrote_the_code_around_the_line_gives_the_one_stretch_it_changed_there():
    line = line_of("        if found:")
    around = SOURCE.splitlines()[line - 3 : line + 2]  # def first ... return None
    # the function written back with the line changed, a comment added and its lines numbered
    rewrite = [f"{n}  {text}" for n, text in enumerate(around, line - 2)]
    rewrite[2] = f"{line}          # more than one match\n{line}          if len(found) > 1:"
    text, why = line_spliced(SOURCE, line, "```python\n" + "\n".join(rewrite) + "\n```")
    assert why == "" and text is not None
    assert text.splitlines() == [
        *SOURCE.splitlines()[: line - 1],
        "        if len(found) > 1:",
        *SOURCE.splitlines()[line:],
    ]
    # a line added just after the ranked one: the ranked line as written, then the added one
    added = [*around[:3], "            found.sort()", *around[3:]]
    text, why = line_spliced(SOURCE, line, "```python\n" + "\n".join(added) + "\n```")
    assert why == "" and text is not None
    assert text.splitlines()[line - 1 : line + 2] == [around[2], "            found.sort()", around[3]]
    # two stretches changed, or the change elsewhere than at the line: not a line repair
    twice = [*around[:2], "        if len(found) > 1:", around[3], "        return found"]
    elsewhere = [*around[:3], "            return found[-1]", *around[4:]]
    for reply in (twice, elsewhere):
        refused = line_spliced(SOURCE, line, "```python\n" + "\n".join(reply) + "\n```")
        assert refused == (None, "the reply held 5 lines, not the line (and one missing after it)")
