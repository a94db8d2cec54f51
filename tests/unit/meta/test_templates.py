"""The fix templates (evolve.meta.templates) on a tiny agent that is not the seed: each template makes its
edit at the ranked line, leaves the rest of the file as it was, and the edits come nearest first, bounded,
seeded."""

from __future__ import annotations

import ast
import sys

import numpy as np
import pytest

from evolve.meta.locations import Location
from evolve.meta.templates import TEMPLATES, at_locations, edits_at

COURIER = '''"""A courier agent: it asks a model, keeps a log and runs what it is told."""
import subprocess

PATIENCE = 64  # seconds a command may run


class Courier:
    def __init__(self, home):
        self.home = home
        self.log = []

    def run(self, command):
        done = subprocess.run(command, cwd=self.home, capture_output=True, text=True)
        return done.stdout

    def run_quietly(self, command):
        done = subprocess.run(command, capture_output=True, text=True)
        return done.stdout[-1:]

    def keep(self, text):
        self.log.append(text)
        if len(text) > PATIENCE and text:
            return min(text, "x")
        return text.strip() + "!"

    def answer(self, reply):
        parts = reply.split()
        while not parts:
            parts = ["none"]
        self.keep(reply)
        return parts

    def tally(self, reply):
        words = [w for w in reply.split() if w and not w.isdigit()]
        total = len(words)
        total = len(self.log)
        total += 1
        return total
'''


def line_of(text: str) -> int:
    (number,) = [n for n, line in enumerate(COURIER.splitlines(), 1) if text in line]
    return number


def edits(text: str, limit: int = 40, seed: int = 0, elsewhere: tuple[str, ...] = ()):
    return edits_at(COURIER, line_of(text), limit, np.random.default_rng(seed), elsewhere)


def changed_line(source: str) -> list[str]:
    """The lines of `source` that differ from COURIER's at the same place (an edit that keeps the line
    count)."""
    before, after = COURIER.splitlines(), source.splitlines()
    assert len(before) == len(after)
    return [new.strip() for old, new in zip(before, after, strict=True) if old != new]


@pytest.mark.parametrize(
    ("template", "at", "after"),
    [
        ("number", "PATIENCE = 64", "PATIENCE = 640  # seconds a command may run"),
        ("number", "PATIENCE = 64", "PATIENCE = 63  # seconds a command may run"),
        ("string", 'min(text, "x")', "return min(text, '')"),
        ("unwrap", "return text.strip()", 'return text + "!"'),
        ("call", 'min(text, "x")', "return max(text, 'x')"),
        ("operator", 'return text.strip() + "!"', "return text.strip() - '!'"),
        ("operator", 'return text.strip() + "!"', "return text.strip()"),
        ("comparison", "len(text) > PATIENCE", "if len(text) >= PATIENCE and text:"),
        ("connective", "len(text) > PATIENCE", "if len(text) > PATIENCE or text:"),
        ("connective", "len(text) > PATIENCE", "if len(text) > PATIENCE:"),
        ("negate", "while not parts", "while parts:"),
        ("negate", "len(text) > PATIENCE", "if not (len(text) > PATIENCE and text):"),
        ("negate", "len(text) > PATIENCE", "if len(text) > PATIENCE and not text:"),
        ("negate", "not w.isdigit()", "words = [w for w in reply.split() if w and w.isdigit()]"),
        ("negate", "not w.isdigit()", "words = [w for w in reply.split() if not w and not w.isdigit()]"),
        ("assign", "total = len(self.log)", "total += len(self.log)"),
        ("assign", "total += 1", "total = 1"),
        ("assign", "total += 1", "total -= 1"),
        ("slice", "done.stdout[-1:]", "return done.stdout"),
        ("slice", "done.stdout[-1:]", "return done.stdout[:-1]"),
        ("drop", "self.log.append(text)", "pass"),
        (
            "boolean",
            "subprocess.run(command, capture_output",
            "done = subprocess.run(command, capture_output=False, text=True)",
        ),
        (
            "keyword",
            "subprocess.run(command, capture_output",
            "done = subprocess.run(command, capture_output=True, text=True, cwd=self.home)",
        ),
    ],
)
def test_each_template_makes_its_edit_at_the_ranked_line_and_nothing_else(template, at, after) -> None:
    made = [e for e in edits(at) if e.template == template]
    assert after in [line for e in made for line in changed_line(e.source)], [e.change for e in made]
    for edit in made:
        ast.parse(edit.source)
        assert len(changed_line(edit.source)) == 1, edit.change  # one line edited, comments and the rest kept
        assert "# seconds a command may run" in edit.source


def test_the_expressions_inside_an_f_string_are_edited_in_place() -> None:
    source = 'def cut(text, limit):\n    return f"{text[:limit / 2]} [cut] {text[-limit // 2:]}"  # halves\n'
    made = edits_at(source, 2, 80, np.random.default_rng(0), near=False)
    floor = [e for e in made if e.template == "operator" and e.change == "/ -> //"]
    assert [e.source for e in floor] == [source.replace("limit / 2", "limit // 2")]
    kept = [e for e in made if e.template != "drop"]
    assert all("# halves" in e.source and "[cut]" in e.source for e in kept)  # its text is never edited
    assert not [e for e in made if e.template == "string"]


def test_an_omitted_call_statement_is_inserted_from_the_same_file_after_the_ranked_statement() -> None:
    at_line = line_of("parts = reply.split()")
    (inserted,) = [e for e in edits("parts = reply.split()") if e.template == "insert" and e.line == at_line]
    lines = inserted.source.splitlines()
    at = lines.index("        parts = reply.split()")
    assert lines[at + 1] == "        self.keep(reply)" and inserted.change == "inserted: self.keep(reply)"


def test_a_keyword_is_restored_only_from_a_call_of_the_same_name_whose_names_are_bound_here() -> None:
    other = "import subprocess\n\ndef go(where):\n    subprocess.run(['ls'], timeout=5, cwd=where)\n"
    made = {
        e.change
        for e in edits("subprocess.run(command, capture_output", elsewhere=(other,))
        if e.template == "keyword"
    }
    assert made == {"run(..., cwd=self.home)", "run(..., timeout=5)"}  # `where` is not bound in run_quietly


def test_a_positional_argument_is_restored_from_a_call_of_the_same_name_elsewhere() -> None:
    other = "def log(text, level, where):\n    print(text, level, where)\n\nlog('x', 2, 'here')\n"
    made = [e for e in edits("self.keep(reply)", elsewhere=(other,)) if e.template == "argument"]
    assert [e.change for e in made] == []  # `keep` is called with one argument everywhere
    source = COURIER.replace("self.log.append(text)", "log(text)")
    restored = [
        e
        for e in edits_at(source, line_of("self.log.append(text)"), 40, np.random.default_rng(0), (other,))
        if e.template == "argument"
    ]
    assert [e.change for e in restored] == ["log(..., 2, 'here')"]
    assert "        log(text, 2, 'here')" in restored[0].source.splitlines()


def test_edits_come_nearest_first_bounded_and_the_same_for_the_same_seed() -> None:
    made = edits("len(text) > PATIENCE", limit=40)
    distances = [abs(e.line - line_of("len(text) > PATIENCE")) for e in made]
    assert distances == sorted(distances) and distances[0] == 0
    assert len(edits("len(text) > PATIENCE", limit=3)) == 3
    assert [e.source for e in edits("len(text) > PATIENCE", seed=4)] == [
        e.source for e in edits("len(text) > PATIENCE", seed=4)
    ]
    first = {edits("len(text) > PATIENCE", limit=1, seed=s)[0].template for s in range(12)}
    assert len(first) > 1  # the templates take turns in a seeded order
    assert len({e.source for e in made}) == len(made) and COURIER not in {e.source for e in made}


def test_every_template_name_is_known_and_bad_input_gets_no_edits() -> None:
    assert {
        e.template for line in range(1, 40) for e in edits_at(COURIER, line, 50, np.random.default_rng(0))
    } <= set(TEMPLATES)
    assert edits_at("def broken(:\n", 1, 5, np.random.default_rng(0)) == []
    assert edits_at(COURIER, 3, 0, np.random.default_rng(0)) == []


def test_at_locations_edits_the_agents_files_at_each_ranked_location_in_order(tmp_path) -> None:
    (tmp_path / "courier").mkdir()
    (tmp_path / "courier" / "core.py").write_text(COURIER)
    (tmp_path / "courier" / "shell.py").write_text(
        "import subprocess\n\ndef go():\n    subprocess.run(['ls'], check=True)\n"
    )
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_core.py").write_text("def test():\n    assert 1 == 1\n")
    ranked = [
        Location("courier/core.py", line_of("subprocess.run(command, capture_output"), 0.9, "e"),
        Location("courier/missing.py", 1, 0.8, "e"),
        Location("tests/test_core.py", 2, 0.7, "e"),
        Location("courier/core.py", line_of("PATIENCE = 64"), 0.5, "e"),
    ]
    made = at_locations(tmp_path, ranked, 4, np.random.default_rng(0))
    assert [g.location.line for g in made] == [ranked[0].line] * 4 + [ranked[3].line] * 4
    assert {g.path for g in made} == {"courier/core.py"}
    every = at_locations(tmp_path, ranked[:1], 40, np.random.default_rng(0))
    assert "run(..., check=True)" in {g.edit.change for g in every}  # a keyword the other file passes


def test_a_file_nested_too_deep_to_unparse_gets_no_edits_and_no_error() -> None:
    deep = "WEIGHT = " + "1 + " * 900 + "1\nLIMIT = 5\n"
    assert edits_at(deep, 2, 10, np.random.default_rng(0)) == []
    assert edits_at("LIMIT = 5\n", 1, 10, np.random.default_rng(0))


def test_a_file_nested_too_deep_gets_no_edits_whatever_the_recursion_limit() -> None:
    # a library may raise the limit: the chain then unparses, and every node of its line would be walked
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(20_000)
    try:
        deep = "WEIGHT = " + "1 + " * 900 + "1\nLIMIT = 5\n"
        assert edits_at(deep, 2, 10, np.random.default_rng(0)) == []
    finally:
        sys.setrecursionlimit(limit)
    shallow = "WEIGHT = " + "1 + " * 40 + "1\nLIMIT = 5\n"
    assert edits_at(shallow, 2, 10, np.random.default_rng(0))


def test_the_condition_that_sends_runs_to_a_ranked_line_lines_below_it_is_edited_too() -> None:
    source = (
        "def parse(block):\n"
        "    if block and block.kind in ('py',):\n"
        "        return 'python'\n"
        "    if block is None:\n"
        "        return 'done'\n"
        "    note = 'no action'\n"
        "    return None\n"
    )
    made = edits_at(source, 7, 100, np.random.default_rng(0))
    guarded = [e for e in made if e.line == 2]
    assert guarded, [e.change for e in made]
    assert "    if block:" in {line for e in guarded for line in e.source.splitlines()}  # one side kept
    near = [abs(e.line - 7) for e in made]
    assert near == sorted(near)  # the window's edits first, then each condition's, nearest first


def test_a_value_computed_and_never_read_replaces_a_literal_below_it_first() -> None:
    # `run` computes where to run and then passes a constant: the dead store is the ingredient.
    source = COURIER.replace(
        "        done = subprocess.run(command, cwd=self.home, capture_output=True, text=True)",
        "        where = self.home\n"
        "        done = subprocess.run(command, cwd='.', capture_output=True, text=True)",
    )
    at = source.splitlines().index(
        "        done = subprocess.run(command, cwd='.', capture_output=True, text=True)"
    )
    for seed in range(4):  # whatever order the other templates take
        first = edits_at(source, at + 1, 1, np.random.default_rng(seed))
        assert [(e.template, e.change) for e in first] == [("unused", "'.' -> where")]
    assert (
        "        done = subprocess.run(command, cwd=where, capture_output=True, text=True)" in first[0].source
    )
    assert not [e for e in edits("subprocess.run(command, cwd") if e.template == "unused"]  # none dead there


def test_a_value_computed_and_never_read_is_passed_where_a_parameter_of_its_name_is_left_out() -> None:
    # `answer` computes a prefix and calls `keep` without it: `keep` takes a `prefix` the call leaves out.
    source = COURIER.replace("    def keep(self, text):", "    def keep(self, text, prefix=''):").replace(
        "        self.keep(reply)\n", "        prefix = reply[:2]\n        self.keep(reply)\n"
    )
    at = source.splitlines().index("        self.keep(reply)") + 1
    made = [(e.template, e.change) for e in edits_at(source, at, 40, np.random.default_rng(0), near=False)]
    assert ("unused", "keep(..., prefix=prefix)") in made
    other = source.replace("def keep(self, text, prefix=''):", "def keep(self, text):")
    made = [(e.template, e.change) for e in edits_at(other, at, 40, np.random.default_rng(0), near=False)]
    assert not [
        change for template, change in made if template == "unused" and "=" in change
    ]  # no such parameter


def test_a_value_computed_and_never_read_is_added_to_a_local_read_below_it() -> None:
    source = COURIER.replace(
        "        total += 1\n        return total", "        extra = len(reply)\n        return total"
    )
    at = source.splitlines().index("        return total") + 1
    made = edits_at(source, at, 40, np.random.default_rng(0), near=False)
    added = [e.change for e in made if e.template == "combine"]
    assert added == ["total -> total + extra", "total -> extra + total"]
    assert (
        "        return total + extra" in made[[e.change for e in made].index(added[0])].source.splitlines()
    )


def test_a_value_read_from_the_wrong_local_is_read_from_one_bound_above_it_nearest_first() -> None:
    source = (
        "import shlex\n"
        "class Runner:\n"
        "    def step(self, name, args):\n"
        "        note = self.apply(name, args)\n"
        "        shown = self.shell('make check')\n"
        "        words = [w for w in shlex.split(shown)]\n"
        "        return ok(note), words\n"
        "def ok(text):\n"
        "    return 'passed' in text\n"
    )
    made = [e for e in edits_at(source, 7, 40, np.random.default_rng(0)) if e.template == "variable"]
    # each local read at line 7 by the locals bound nearest above it (the parameters last), at most 3; the
    # receiver `self`, the comprehension's `w` and the module's `ok` and `shlex` are never used
    assert [e.change for e in made if e.line == 7] == [
        "words -> shown",
        "words -> note",
        "words -> name",
        "note -> words",
        "note -> shown",
        "note -> name",
    ]
    assert "        return ok(shown), words\n" in made[4].source
    assert {e.line for e in made} == {6, 7}  # then line 6's, within the window
    at_9 = edits_at(source, 9, 40, np.random.default_rng(0))
    assert not [e for e in at_9 if e.template == "variable" and e.line == 9]  # `ok` has no other local


LOST_CALL = '''"""A relay: it cleans what it is given before it sends it on."""


def cleaned(text):
    return text.strip()


def relay(send, text, times=1):
    text = text.lower()
    sent = send(text * times)
    return sent


def echo(text):
    return text
'''


def test_a_helper_nothing_calls_is_called_on_a_value_the_ranked_statement_reads_just_before_it() -> None:
    # `cleaned` is called nowhere (its call was lost); `echo` is called elsewhere, so it is not a candidate.
    other = "from relay import echo\n\nprint(echo('x'))\n"
    at = LOST_CALL.splitlines().index("    sent = send(text * times)") + 1
    made = [
        e for e in edits_at(LOST_CALL, at, 40, np.random.default_rng(0), (other,)) if e.template == "uncalled"
    ]
    assert [e.change for e in made if e.line == at] == [
        "inserted before: text = cleaned(text)",  # what the statement reads, bound above it, first
        "inserted before: times = cleaned(times)",
        "inserted after: sent = cleaned(sent)",  # what it binds: after it
    ]
    assert "    text = cleaned(text)\n    sent = send(text * times)\n" in made[0].source
    assert "    sent = send(text * times)\n    sent = cleaned(sent)\n" in made[2].source
    assert all("echo(" not in e.change for e in made)
    for seed in range(4):  # backed by the code's own evidence, it comes first at its distance
        assert edits_at(LOST_CALL, at, 1, np.random.default_rng(seed), (other,))[0].template == "uncalled"
    called = LOST_CALL.replace("    text = text.lower()", "    text = cleaned(text).lower()")
    assert not [
        e for e in edits_at(called, at, 40, np.random.default_rng(0), (other,)) if e.template == "uncalled"
    ]


def test_a_helper_call_is_not_inserted_before_a_statement_that_does_not_begin_its_line() -> None:
    source = LOST_CALL.replace("    sent = send(text * times)", "    times += 0; sent = send(text * times)")
    at = source.splitlines().index("    times += 0; sent = send(text * times)") + 1
    made = [e for e in edits_at(source, at, 60, np.random.default_rng(0)) if e.template == "uncalled"]
    assert made, "the first statement of the line still gets its insertions"
    for edit in made:
        ast.parse(edit.source)
        assert "; sent = send(text * times)" in edit.source  # the second statement was never split from it


def test_a_first_binding_is_not_made_an_accumulation_and_an_attribute_is_left_alone() -> None:
    changed = [line for e in edits("total = len(words)") for line in changed_line(e.source)]
    assert "total += len(self.log)" in changed  # the next line's accumulation, within the window
    assert "total += len(words)" not in changed
    assert not [e for e in edits("self.home = home") if e.template == "assign"]


def test_without_near_only_the_ranked_lines_own_code_is_edited() -> None:
    line = line_of("total += 1")
    own = edits_at(COURIER, line, 40, np.random.default_rng(0), near=False)
    assert own and {edit.line for edit in own} == {line}
    assert {edit.line for edit in edits_at(COURIER, line, 40, np.random.default_rng(0))} > {line}


def test_what_a_function_declared_to_return_bool_returns_is_negated_and_no_other_return() -> None:
    source = (
        "def ready(out: str) -> bool:\n    return out.endswith('ok')\n\n\n"
        "def named(out: str) -> str:\n    return out.strip()\n"
    )
    rng = np.random.default_rng(0)
    made = [e for e in edits_at(source, 2, 40, rng) if e.template == "negate"]
    assert [e.change for e in made] == ["negated: out.endswith('ok')"]
    assert "    return not out.endswith('ok')\n" in made[0].source
    assert [e for e in edits_at(source, 6, 40, rng) if e.template == "negate"] == []


def test_a_condition_reading_an_item_of_a_local_it_does_not_test_gets_a_none_check_in_front() -> None:
    source = (
        "def kind(match, self_test):\n"
        "    if match[1] == 'py':\n"
        "        return 1\n"
        "    if match and match[1] == 'sh':\n"
        "        return 2\n"
        "    return 0 if LIMIT.top > 1 else 3\n"
    )
    rng = np.random.default_rng(0)
    made = [e for e in edits_at(source, 2, 60, rng, near=False) if e.template == "guard"]
    assert [e.change for e in made] == [
        "guarded: match is not None and match[1] == 'py'",
        "guarded: match and match[1] == 'py'",
    ]
    assert "    if match is not None and match[1] == 'py':\n" in made[0].source
    # already tested beside it in the same `and`; a module-level name is no local
    assert [e for e in edits_at(source, 4, 60, rng, near=False) if e.template == "guard"] == []
    assert [e for e in edits_at(source, 6, 60, rng, near=False) if e.template == "guard"] == []


def test_a_set_operator_is_changed_to_its_twin() -> None:
    source = "def kept(names, parts):\n    return not names | set(parts)\n"
    made = [e for e in edits_at(source, 2, 40, np.random.default_rng(0)) if e.template == "operator"]
    assert "    return not names & set(parts)\n" in [e.source.splitlines(keepends=True)[1] for e in made]
    assert "| -> &" in [e.change for e in made]


def lines_made(template: str, source: str, line: int) -> list[str]:
    """The line `line` of `source` as each of `template`'s edits there leaves it, stripped, sorted."""
    made = edits_at(source, line, 80, np.random.default_rng(0))
    return sorted(e.source.splitlines()[line - 1].strip() for e in made if e.template == template)


def test_a_call_is_offered_every_other_callee_of_its_family_and_no_other() -> None:
    assert lines_made("call", 'def stem(path):\n    return path.strip(".py")\n', 2) == [
        "return path.lstrip('.py')",
        "return path.removeprefix('.py')",
        "return path.removesuffix('.py')",
        "return path.rstrip('.py')",
    ]
    assert not lines_made("call", "def f(x):\n    return x.title()\n", 2)


def test_a_method_call_with_arguments_is_unwrapped_to_its_receiver_but_a_modules_call_is_not() -> None:
    made = lines_made(
        "unwrap", 'import json\n\n\ndef stem(path):\n    return json.loads(path.strip(".py"))\n', 5
    )
    assert "return json.loads(path)" in made
    assert "return json" not in made


def test_a_regular_expression_call_gets_each_flag_it_lacks_and_loses_each_it_has() -> None:
    source = 'import re\n\n\ndef blocks(text):\n    return re.findall(r"^```(.*?)```", text, re.DOTALL)\n'
    assert lines_made("flag", source, 5) == [
        "return re.findall('^```(.*?)```', text)",
        "return re.findall('^```(.*?)```', text, re.DOTALL | re.IGNORECASE)",
        "return re.findall('^```(.*?)```', text, re.DOTALL | re.MULTILINE)",
    ]
    made = lines_made("flag", 'import re\n\nWORD = re.compile(r"\\w+")\n', 3)
    assert made == sorted(
        f"WORD = re.compile('\\\\w+', re.{flag})" for flag in ("MULTILINE", "DOTALL", "IGNORECASE")
    )
    computed = 'import re\n\n\ndef f(text, mode):\n    return re.split(",", text, flags=mode)\n'
    assert not lines_made("flag", computed, 5)


def test_a_patterns_repeated_group_is_made_a_group_of_the_repetition_then_its_quantifiers_swapped() -> None:
    source = 'import re\n\nKIND = re.compile(r"^```(\\w)*[ ]*(?:x)+([a-z*]+?)")\n'
    made = [e.change for e in edits_at(source, 3, 80, np.random.default_rng(0)) if e.template == "quantifier"]
    # the capturing group's repetition moves inside it; the non-capturing group and the class's `*` stay
    assert made[0] == "repeated group -> group of the repetition: '(\\\\w)*'"
    assert lines_made("quantifier", source, 3) == sorted(
        [
            "KIND = re.compile('^```(\\\\w*)[ ]*(?:x)+([a-z*]+?)')",
            "KIND = re.compile('^```(\\\\w)+[ ]*(?:x)+([a-z*]+?)')",
            "KIND = re.compile('^```(\\\\w)*[ ]+(?:x)+([a-z*]+?)')",
            "KIND = re.compile('^```(\\\\w)*[ ]*(?:x)*([a-z*]+?)')",
            "KIND = re.compile('^```(\\\\w)*[ ]*(?:x)+([a-z*]*?)')",
        ]
    )
    assert not lines_made("quantifier", 'TEXT = "(a)*"\n', 1)  # not a pattern of `re`


def test_a_local_is_wrapped_in_the_call_of_the_function_that_names_its_parameter_alike() -> None:
    source = (
        "def names(source):\n    return source.split()\n\n\n"
        "def count(size):\n    return size\n\n\n"
        "def known(source, size):\n    return {name for name in source if size}\n"
    )
    made = [e for e in edits_at(source, 10, 40, np.random.default_rng(0)) if e.template == "wrap"]
    assert [e.change for e in made] == ["source -> names(source)", "size -> count(size)"]
    assert "    return {name for name in names(source) if size}\n" in made[0].source
    # the function itself is never its own wrapper
    assert not [e for e in edits_at(source, 2, 40, np.random.default_rng(0)) if e.template == "wrap"]


def test_an_argument_a_sibling_call_converts_at_the_same_place_is_converted_here_too() -> None:
    source = (
        "import json\n\n\n"
        "def dispatch(command, path, root):\n"
        "    if command == 'load':\n"
        "        return load(root, path)\n"
        "    if command == 'show':\n"
        "        return show(root, path.read_text())\n"
        "    if command == 'parse':\n"
        "        return parse(root, json.loads(path))\n"
        "    return root.replace(path, '')\n"
    )
    made = [e for e in edits_at(source, 6, 40, np.random.default_rng(0)) if e.template == "wrap"]
    assert sorted(e.change for e in made) == ["path -> json.loads(path)", "path -> path.read_text()"]
    assert "        return load(root, path.read_text())\n" in {e.source.splitlines(True)[5] for e in made}
    # a method of a local given the value is no conversion of it, nor a call with fewer arguments
    assert not [e for e in edits_at(source, 11, 400, np.random.default_rng(0)) if e.template == "wrap"]


FINDER = """def find(items, key):
    for item in items:
        if item == key:
            return item
    return None


def pick(items, key):
    found = find(items, key)
    return found
    return items[-1]


def count(items, key):
    found = len(items)
    return found
"""


def test_a_statement_reading_what_may_be_none_is_put_under_a_none_check() -> None:
    at = FINDER.splitlines().index("    return found") + 1
    made = [
        e for e in edits_at(FINDER, at, 40, np.random.default_rng(0), near=False) if e.template == "guard"
    ]
    assert [e.change for e in made] == ["guarded: if found is not None: return found"]
    assert "    if found is not None:\n        return found\n    return items[-1]\n" in made[0].source
    ast.parse(made[0].source)
    other = FINDER.splitlines().index("    return found", at) + 1  # `len` is no function of the agent's
    assert not [
        e for e in edits_at(FINDER, other, 40, np.random.default_rng(0), near=False) if e.template == "guard"
    ]
    tested = FINDER.replace(
        "    return found\n    return items", "    if found:\n        return found\n    return items"
    )
    assert not [
        e for e in edits_at(tested, at + 1, 40, np.random.default_rng(0), near=False) if e.template == "guard"
    ]


def test_a_switch_the_call_leaves_at_its_default_is_offered_the_other_way() -> None:
    library = (
        "import subprocess\n\n\ndef shell(command):\n    return subprocess.run(command, text=True).stdout\n"
    )
    made = lines_made("keyword", library, 5)
    assert "return subprocess.run(command, text=True, capture_output=True).stdout" in made
    assert "return subprocess.run(command, text=True, check=True).stdout" in made
    own = (
        "def fetch(url, strict=False, *, quiet=True):\n    return url\n\n\n"
        "def both(a, b):\n    return fetch(a) + fetch(b, True)\n"
    )
    made = lines_made("keyword", own, 6)
    assert "return fetch(a, strict=True) + fetch(b, True)" in made
    assert "return fetch(a, quiet=False) + fetch(b, True)" in made
    assert "return fetch(a) + fetch(b, True, strict=True)" not in made  # passed by position already


def test_a_switch_is_read_only_from_the_standard_library_and_never_by_importing_what_acts() -> None:
    import sys

    acting = "import antigravity\nimport shady\n\n\ndef f(x):\n    return antigravity.fly(x) + shady.run(x)\n"
    assert not lines_made("keyword", acting, 6)
    assert "antigravity" not in sys.modules and "shady" not in sys.modules


def test_a_file_shadowing_a_standard_module_is_never_imported_for_a_signature(tmp_path, monkeypatch) -> None:
    import sys

    from evolve.meta.signatures import _standard

    marker = tmp_path / "ran"
    (tmp_path / "tabnanny.py").write_text(
        f"open({str(marker)!r}, 'w').close()\ndef check(x, quiet=False): pass\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "tabnanny", raising=False)
    assert _standard("tabnanny") is None
    assert not marker.exists()
    assert not lines_made("keyword", "import tabnanny\n\n\ndef f(x):\n    return tabnanny.check(x)\n", 5)


def test_a_loops_break_and_continue_are_exchanged() -> None:
    source = "def first(items):\n    for item in items:\n        if item:\n            break\n    return 1\n"
    assert lines_made("jump", source, 4) == ["continue"]
    assert lines_made("jump", source.replace("break", "continue"), 4) == ["break"]
