"""Parsing on the engine's threads: CPython 3.11's AST constructor race is parsed again, anything else
propagates; whatever does not parse is a SyntaxError."""

import ast
import threading

import pytest

from evolve import syntax


def test_a_parse_that_met_the_race_is_parsed_again(monkeypatch):
    real, calls = ast.parse, []

    def racing(source, filename="<unknown>"):
        calls.append(source)
        if len(calls) == 1:
            raise SystemError(f"{syntax.RACE} (before=36, after=31)")
        return real(source, filename)

    monkeypatch.setattr(ast, "parse", racing)
    assert isinstance(syntax.parse("x = 1\n").body[0], ast.Assign)
    assert len(calls) == 2


def test_other_errors_propagate():
    with pytest.raises(SyntaxError):
        syntax.parse("def (:\n")


def test_many_threads_parse_agent_sized_sources_at_once():
    source = "\n".join(f"def f{i}(a, b):\n    return [a + b for _ in range({i})]\n" for i in range(300))
    errors: list[Exception] = []

    def work():
        try:
            for _ in range(20):
                syntax.parse(source)
        except (SystemError, SyntaxError) as exc:  # collected, then asserted below
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


@pytest.mark.parametrize(
    ("source", "said"),
    [
        ("x = 1\x00\n", "null bytes"),
        (b"x = 1\x00\n", "null bytes"),
        ("x = " + "-" * 300_000 + "1\n", "Error"),
    ],
)
def test_what_ast_parse_reports_otherwise_is_a_syntax_error(source, said):
    """Agent-written code on the host: a null byte (a ValueError on some 3.11 releases) and nesting too deep
    for the parser (RecursionError or MemoryError) are SyntaxErrors, so a caller catches one exception."""
    with pytest.raises(SyntaxError, match=said):
        syntax.parse(source)


@pytest.mark.parametrize("source", ["def f(:\n", "x = 1\x00\n", "x = " + "-" * 300_000 + "1\n"])
def test_parsed_is_none_for_what_does_not_parse(source):
    assert syntax.parsed(source) is None


def test_parsed_is_the_tree_of_what_parses():
    tree = syntax.parsed("x = 1\n")
    assert tree is not None
    assert isinstance(tree.body[0], ast.Assign)
