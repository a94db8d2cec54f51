"""The lines that hold a key the failing own tests read (evolve.meta.asserted)."""

from __future__ import annotations

from evolve.meta.asserted import asserted_keys, keyed_lines

REPORT = """sent = {'x': 1}

    def test_sent(gateway):
        main(["solve"])
        first = gateway.requests[0][1]["messages"][1]
>       assert "Fix" in first["content"] and payload[key] == 1
E       AssertionError: assert 'Fix' in 'rules'
E        +  where 'rules' = ...["note"]

tests/test_cli.py:31: AssertionError"""


def test_the_keys_are_the_constant_subscripts_of_the_tests_source_lines_not_pytests_explanation() -> None:
    assert asserted_keys(REPORT) == {"messages", "content"}
    assert asserted_keys("") == frozenset()


def test_a_line_scores_each_key_it_holds_by_how_few_of_the_lines_run_hold_it() -> None:
    sources = {
        "agent/model.py": 'def body(m):\n    return {"messages": m, "model": "x"}\n',
        "agent/loop.py": 'def a(t):\n    return {"content": t}\n\n\ndef b(t):\n    return {"content": t}\n',
    }
    ran = [("agent/model.py", 2), ("agent/loop.py", 2), ("agent/loop.py", 6)]
    scores = keyed_lines(sources, ran, frozenset({"messages", "content"}))
    assert scores == {("agent/model.py", 2): 1.0, ("agent/loop.py", 2): 0.5, ("agent/loop.py", 6): 0.5}
    # a line the failing tests did not run is not scored, and does not dilute the others
    assert keyed_lines(sources, ran[:2], frozenset({"content"})) == {("agent/loop.py", 2): 1.0}
    assert keyed_lines(sources, ran, frozenset()) == {}
