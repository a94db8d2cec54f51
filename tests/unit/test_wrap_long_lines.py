"""scripts/wrap_long_lines.py: what `ruff format` leaves long is wrapped, and behaviour never changes."""

import ast
import importlib.util
import sys
import textwrap
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "wrap_long_lines.py"
LIMIT = 60


@pytest.fixture(scope="module")
def wrap():
    spec = importlib.util.spec_from_file_location("wrap_long_lines", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    # dataclasses look their module up in sys.modules while the class is made.
    sys.modules[spec.name] = module
    try:
        spec.loader.exec_module(module)
        yield module
    finally:
        del sys.modules[spec.name]


def fixed(wrap, source: str, strings: bool = True) -> str:
    source = textwrap.dedent(source)
    new, _ = wrap.fix_source(source, LIMIT, strings)
    assert wrap.normalised_dump(new) == wrap.normalised_dump(source)
    return new


def longest(text: str) -> int:
    return max(len(line) for line in text.splitlines())


def test_a_comment_paragraph_is_reflowed_at_its_indentation_and_the_next_paragraph_kept(wrap):
    new = fixed(
        wrap,
        """
        def f():
            # one two three four five six seven eight nine ten eleven twelve
            # thirteen.
            #
            # - a list item that stays as it is
            return 1
        """,
    )
    assert longest(new) <= LIMIT
    comment = [line for line in new.splitlines() if line.strip().startswith("#")]
    assert all(line.startswith("    # ") or line == "    #" for line in comment)
    assert " ".join(w for line in comment[:-2] for w in line.split()[1:]).endswith("twelve thirteen.")
    assert comment[-2:] == ["    #", "    # - a list item that stays as it is"]


def test_a_long_trailing_comment_moves_above_its_line_and_a_pragma_stays(wrap):
    new = fixed(
        wrap,
        """
        if True:
            x = 1  # the reason this is one, which takes a whole lot of words
            y = 2  # noqa: E501 a pragma that a tool reads on this very line
        """,
    )
    lines = new.splitlines()
    at = lines.index("    x = 1")
    assert lines[at - 2 : at] == ["    # the reason this is one, which takes a whole lot of", "    # words"]
    assert "    y = 2  # noqa: E501 a pragma that a tool reads on this very line" in lines


def test_a_docstring_paragraph_is_reflowed_but_doctests_and_indented_blocks_are_not(wrap):
    source = '''
    def f():
        """Summary line that is much too long to fit in the sixty columns.

        >>> f()  # a doctest line that is long and must stay exactly as written
        1
            an indented block that is long and must also stay as it is written
        """
    '''
    new = fixed(wrap, source)
    assert longest(new.split(">>>")[0]) <= LIMIT
    assert '    """Summary line that is much too long to fit in the' in new
    assert ">>> f()  # a doctest line that is long and must stay exactly as written" in new
    assert "        an indented block that is long and must also stay as it is written" in new


def test_a_one_line_docstring_keeps_its_quotes_on_its_words(wrap):
    new = fixed(
        wrap,
        '''
    class A:
        """A class whose one-line docstring is longer than the limit."""
    ''',
    )
    assert longest(new) <= LIMIT
    assert new.rstrip().endswith('limit."""')


def test_strings_split_into_concatenations_of_the_same_value_in_calls_collections_and_fstrings(wrap):
    source = """
    def f(x):
        print(
            "a string argument much longer than sixty characters, split at spaces",
        )
        names = ["an item of a list that is longer than the sixty character limit"]
        return f"the value {x!r:>{10}} and words enough to pass the sixty limit {x}"
    """
    new = fixed(wrap, source)
    assert longest(new) <= LIMIT + 2
    # In a list the pieces are parenthesised: one item, not two that lost a comma.
    assert '    names = [("an item' in new
    # The pieces make one constant, the same value as before (fixed() compared the whole trees).
    items = next(n for n in ast.walk(ast.parse(new)) if isinstance(n, ast.List)).elts
    assert [item.value for item in items] == [
        "an item of a list that is longer than the sixty character limit"
    ]


def test_no_strings_leaves_string_literals_whole(wrap):
    source = 'PROMPT = ("a prompt that the model reads, longer than sixty characters by far")\n'
    assert fixed(wrap, source, strings=False) == source


def test_strings_in_code_laid_out_by_hand_stay_whole(wrap):
    source = textwrap.dedent("""
    rows = [("a", "a string in a statement the author laid out by hand, long"),
            ("b", "b")]  # fmt: skip
    # fmt: off
    other = ("a string in a region the author laid out by hand, also long")
    # fmt: on
    """)
    assert fixed(wrap, source) == source


def test_a_file_whose_tree_would_change_is_refused_and_left_as_it_was(wrap, tmp_path, monkeypatch):
    path = tmp_path / "m.py"
    path.write_text("# a comment much longer than the sixty characters the test allows here\nx = 1\n")
    before = path.read_text()
    monkeypatch.setattr(wrap, "fix_source", lambda source, limit, strings: (source + "y = 2\n", 1))
    outcome = wrap.process(path, LIMIT, True, False)
    assert outcome.refused == "the fixes would change its AST"
    assert path.read_text() == before


def test_the_command_writes_fixes_lists_what_remains_and_fails_while_lines_are_long(wrap, tmp_path, capsys):
    (tmp_path / "a.py").write_text("# " + "word " * 20 + "\nx = 1\n")
    (tmp_path / "b.py").write_text("x = [" + "1, " * 30 + "]\n")
    assert wrap.main(["--line-length", str(LIMIT), str(tmp_path)]) == 1
    assert longest((tmp_path / "a.py").read_text()) <= LIMIT
    out = capsys.readouterr().out
    assert "b.py:1: 96 > 60" in out and "a.py" not in out
    ast.parse((tmp_path / "a.py").read_text())
