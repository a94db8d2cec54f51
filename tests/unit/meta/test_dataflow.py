"""Dead stores (evolve.meta.dataflow): values a function binds and never reads, found from the syntax tree
alone, and the lines a failing run ran ranked for them."""

from __future__ import annotations

import textwrap

from evolve.meta.dataflow import BINDING_SCORE, STORE_SCORE, DeadStore, dead_store_locations, dead_stores

DROPPED = textwrap.dedent(
    """\
    def solve(problem, run):
        words = problem.split()
        check = " ".join(words)
        return run(problem, "")
    """
)


def test_a_value_bound_and_never_read_is_found_with_the_statement_after_it() -> None:
    assert dead_stores("agent/a.py", DROPPED) == [DeadStore("agent/a.py", "check", 3, "solve", 4)]


def test_every_kind_of_read_is_a_use() -> None:
    source = textwrap.dedent(
        """\
        def f(x):
            closure = x + 1
            deleted = x
            del deleted
            annotated: int = 2
            def g():
                return closure
            return [annotated for _ in range(x)], g
        """
    )
    assert dead_stores("a.py", source) == []


def test_names_left_unread_on_purpose_are_not_judged() -> None:
    source = textwrap.dedent(
        """\
        COUNT = 0


        def unpacked(pair):
            first, second = pair
            for item in pair:
                pass
            with open(pair) as handle:
                pass
            _ignored = pair
            return first


        def declared():
            global COUNT
            COUNT = 1


        def dynamic(x):
            kept = x
            return locals()
        """
    )
    assert dead_stores("a.py", source) == []


def test_a_nested_function_is_judged_in_its_own_scope() -> None:
    source = textwrap.dedent(
        """\
        def outer(x):
            def inner():
                lost = x
                return x
            lost = inner()
            return x
        """
    )
    found = dead_stores("a.py", source)
    assert [(store.function, store.line, store.after) for store in found] == [
        ("inner", 3, 4),
        ("outer", 5, 6),
    ]


def test_a_file_that_does_not_parse_has_none() -> None:
    assert dead_stores("a.py", "def f(:\n") == []


def test_only_a_store_a_failing_run_ran_is_ranked_and_its_next_statement_only_where_that_ran() -> None:
    store = DeadStore("agent/a.py", "check", 3, "solve", 4)
    assert dead_store_locations([store], frozenset({("agent/a.py", 2)})) == []
    both = dead_store_locations([store], frozenset({("agent/a.py", 3), ("agent/a.py", 4)}))
    assert [(loc.line, loc.score) for loc in both] == [(4, STORE_SCORE), (3, BINDING_SCORE)]
    assert both[0].evidence.startswith("`check` is bound at line 3 (in `solve`) and never read")
    assert "the statement after it" in both[0].evidence and "wrong name" in both[1].evidence
    alone = dead_store_locations([store], frozenset({("agent/a.py", 3)}))
    assert [loc.line for loc in alone] == [3]
