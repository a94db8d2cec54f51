"""A list's repr where its items were meant: found in sent text, and the code that formats a list into text
found and joined (the `join` template), on a small agent written here (not the seed)."""

from __future__ import annotations

import ast
import json

import numpy as np

from evolve.meta.reprs import formatted_sequences, joined, sequence_reprs
from evolve.meta.templates import edits_at

FILES = ["def area(w, h):\n    '''The area.'''\n    raise NotImplementedError\n", "X = 1\n"]

PAGER = '''"""A pager."""
import textwrap

HEADER = "Pages to read:\\n{pages}"


def pages(root) -> list[str]:
    return sorted(root)


def show(root, words):
    found = pages(root)
    message = HEADER.format(pages=found)
    tail = f"and then: {words}"
    names = " ".join(words)
    return message + tail + "%s" % names


def quote(items: list[str], width):
    text = f"items: {items}"
    width = str(width)
    items = ", ".join(items)
    return text + str(items) + width
'''


def test_a_lists_repr_with_its_newlines_escaped_is_found_in_sent_text() -> None:
    sent = f"Task: fix it\n\nFiles:\n{FILES}\n\nMake the change."
    assert sequence_reprs(sent) == [repr(FILES)]
    assert sequence_reprs(f"pairs: {tuple(FILES)}") == [repr(tuple(FILES))]
    # a JSON array a tool printed on purpose, a list without a text of several lines, a short one: none
    assert sequence_reprs(f"out: {json.dumps(FILES)}") == []
    assert sequence_reprs("names: ['alpha.py', 'beta.py', 'gamma.py', 'delta.py']") == []
    assert sequence_reprs("['a\\nb']") == []
    assert sequence_reprs("['unterminated\\n and more text of the reply, " * 50) == []


def test_the_code_that_formats_a_list_into_text_is_found_where_the_latest_binding_is_a_list() -> None:
    tree = ast.parse(PAGER)
    found = [(site.line, site.value.id) for site in formatted_sequences(tree)]
    # format of a call annotated to return a list; an f-string of a parameter annotated as one; not `words`
    # (nothing says what it is), `names` (a str), nor `items` once rebound to a str, nor `width`
    assert found == [(13, "found"), (20, "items")]


def test_a_function_of_another_file_annotated_to_return_a_list_counts() -> None:
    caller = "def go(root):\n    shown = listing(root)\n    return 'Files: {}'.format(shown)\n"
    donor = ast.parse("def listing(root) -> 'list[str]':\n    return []\n")
    assert formatted_sequences(ast.parse(caller)) == []
    site = formatted_sequences(ast.parse(caller), [donor])[0]
    assert (site.line, site.value.id) == (3, "shown")
    assert ast.unparse(joined(site, "\n")) == "'Files: {}'.format('\\n'.join(shown))"


def test_the_join_template_joins_the_formatted_list_first_at_its_line() -> None:
    for seed in range(4):
        made = edits_at(PAGER, 13, 2, np.random.default_rng(seed))
        assert made[0].change == "found -> '\\n'.join(found)"
    made = [e for e in edits_at(PAGER, 13, 40, np.random.default_rng(0)) if e.template == "join"]
    assert [e.change for e in made] == ["found -> '\\n'.join(found)", "found -> ''.join(found)"]
    assert "    message = HEADER.format(pages=''.join(found))\n" in made[1].source
    # in an f-string the statement is edited; what it makes still parses and joins the items
    in_fstring = [e for e in edits_at(PAGER, 20, 40, np.random.default_rng(0)) if e.template == "join"]
    assert len(in_fstring) == 2
    namespace: dict = {}
    exec(compile(in_fstring[1].source, "pager", "exec"), namespace)  # noqa: S102 - the test's own code
    assert namespace["quote"](["a", "b"], 3) == "items: aba, b3"
    # a line that formats no list gets none
    assert not [e for e in edits_at(PAGER, 16, 40, np.random.default_rng(0)) if e.template == "join"]
