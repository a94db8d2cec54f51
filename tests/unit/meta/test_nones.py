"""`None` made text and sent to the model (evolve.meta.nones)."""

from __future__ import annotations

from evolve.meta.nones import BOUND_SHARE, none_locations

# `run` lost the argument that keeps a command's output: its text reads `NoneNone`.
SHELL = """def run(box, command, token):
    done = box.execute(command)
    headers = {"auth": f"Bearer {token}"}
    text = f"{done.out}{done.err}\\n[code {done.code}]"
    return text, headers
"""
SOURCES = {"agent/shell.py": SHELL}
READ = {
    ("agent/shell.py", 3): (("token", "None"),),
    ("agent/shell.py", 4): (("done.out", "None"), ("done.err", "None"), ("done.code", "1")),
}
SENT = "Task: fix f\n```bash\npython3 -m doctest f.py\n```\nNoneNone\n[code 1]"


def test_an_f_string_that_sent_the_model_none_ranks_with_the_line_that_bound_the_value() -> None:
    found = none_locations(SOURCES, [(READ, SENT), ({}, "Task: fix g")])
    assert [(x.line, x.score) for x in found] == [(4, 0.5), (2, round(0.5 * BOUND_SHARE, 4))]
    assert found[0].evidence.startswith("as 1 of 2 failing replays ran it, `done.out` was None")
    # the header's f-string rendered `Bearer None` too, but the model was never sent it


def test_nothing_where_the_text_was_not_sent_or_no_value_was_none() -> None:
    assert none_locations(SOURCES, [(READ, "Task: fix f\n[code 1]")]) == []
    read = {("agent/shell.py", 4): (("done.out", "'ok'"), ("done.err", "''"), ("done.code", "0"))}
    assert none_locations(SOURCES, [(read, SENT)]) == []
    assert none_locations(SOURCES, []) == []
