"""Provenance: each field of a recorded request traced to the code of a small agent written here (not the
seed), and the one ranking (`locate`) that merges it with other sources."""

from __future__ import annotations

from pathlib import Path

from evolve.meta.evidence import TaskRun, Turn
from evolve.meta.locate import locate, merge
from evolve.meta.locations import Location
from evolve.meta.profile import Markers
from evolve.meta.provenance import Recorded, trace
from evolve.meta.shown import shown

CLIENT = '''"""A client."""
import os

LIMIT = 4096


def ask(messages, hot=False):
    payload = {"messages": messages, "max_tokens": 64, "temperature": float(os.environ.get("T", "0.3"))}
    return send(payload, stop=["</act>"])


def act(reply):
    from agent import words
    if "<act>" not in reply:
        raise ValueError(words.AGAIN)
'''
WORDS = '''GREETING = """You are Quill, a terse assistant that edits files.
Answer with one <act> element."""
AGAIN = "I could not find an <act> element in that; answer with exactly one."
TEMPLATE = "Here is the job for today:\\n{job}\\n\\nFiles you may touch: {files}"
'''


def _agent(tmp_path: Path) -> Path:
    (tmp_path / "agent").mkdir()
    (tmp_path / "agent" / "client.py").write_text(CLIENT)
    (tmp_path / "agent" / "words.py").write_text(WORDS)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_client.py").write_text('def test_x():\n    assert {"max_tokens": 64}\n')
    return tmp_path


def _record(messages: list[dict], reply: str, finish: str = "stop") -> dict:
    return {
        "request": {"messages": messages, "max_tokens": 64, "temperature": 0.3, "stop": ["</act>"]},
        "response": {"message": {"role": "assistant", "content": reply}, "finish_reason": finish},
    }


def _conversation(job: str, replies: list[tuple[str, str]], again: str) -> tuple[dict, ...]:
    system = {
        "role": "system",
        "content": "You are Quill, a terse assistant that edits files.\nAnswer with one <act> element.",
    }
    messages = [
        system,
        {"role": "user", "content": f"Here is the job for today:\n{job}\n\nFiles you may touch: a.py"},
    ]
    records = []
    for reply, finish in replies:
        records.append(_record(list(messages), reply, finish))
        messages += [{"role": "assistant", "content": reply}, {"role": "user", "content": again}]
    return tuple(records)


def test_a_literal_and_a_string_constant_are_traced_from_the_recorded_requests(tmp_path: Path) -> None:
    code = _agent(tmp_path)
    again = "I could not find an <act> element in that; answer with exactly one."
    runs = [
        Recorded(
            "fail",
            _conversation(
                "fix the parser",
                [("I will look at", "length"), ("Let me", "length"), ("Sure, first", "length")],
                again,
            ),
        ),
        Recorded("pass", _conversation("add a flag", [("<act>done", "stop")], again)),
    ]
    found = trace(code, runs)
    by_line = {(loc.path, loc.line): loc for loc in locate(code, runs)}  # one per line, evidence merged
    token_limit = by_line[("agent/client.py", 8)]
    assert token_limit.evidence.startswith(
        "every request set max_tokens = 64; replies cut at the length limit in 3 of 4"
    )
    assert token_limit.score == 0.75
    # the canned answer to replies the agent did not act on, traced to its constant
    canned = by_line[("agent/words.py", 3)]
    assert "answered 2 of 3 replies in failed evaluations" in canned.evidence and canned.score > 0.5
    # where that text is sent from (the line that chose not to act) ranks just above the text itself
    sender = by_line[("agent/client.py", 15)]
    assert sender.evidence.startswith(
        "sends AGAIN (agent/words.py line 3); the agent answered 2 of 3 replies"
    )
    assert sender.score > canned.score
    # the system text and the template whose literal pieces appear in the messages, ranked low
    assert ("agent/words.py", 1) in by_line and ("agent/words.py", 4) in by_line
    assert by_line[("agent/words.py", 4)].score < token_limit.score
    # a string that is a number ("0.3") sent as temperature, and a stop list; nothing from the tests
    assert "every request set temperature = 0.3" in token_limit.evidence
    assert any('stop = ["</act>"]' in loc.evidence and loc.line == 9 for loc in found)
    assert not any(loc.path.startswith("tests/") for loc in found)
    assert found[0].line == 8 and found[0].score == 0.75  # the most suspicious first


def test_names_do_not_matter_only_what_was_sent(tmp_path: Path) -> None:
    code = _agent(tmp_path)
    renamed = CLIENT.replace("payload", "zz").replace("ask", "q").replace("LIMIT", "N")
    (code / "agent" / "client.py").write_text(renamed)
    runs = [Recorded("fail", _conversation("x", [("cut", "length")], "ok"))]
    assert trace(code, runs)[0].path == "agent/client.py"
    assert trace(code, []) == []


def test_hostile_agent_code_and_records_are_read_as_data(tmp_path: Path) -> None:
    code = _agent(tmp_path)
    (code / "agent" / "broken.py").write_text("def f(:\n")
    (code / "agent" / "deep.py").write_text("X = " + "(" * 300_000 + "\n")
    odd = ({"request": "not a dict"}, {"request": {"messages": "no", "max_tokens": [{}]}, "response": {}})
    assert trace(code, [Recorded("fail", odd)]) == []


def test_locate_merges_sources_keeping_the_highest_score_and_every_evidence(tmp_path: Path) -> None:
    code = _agent(tmp_path)
    runs = [Recorded("fail", _conversation("x", [("cut", "length"), ("cut again", "stop")], "ok"))]
    spectra = [
        Location("agent/client.py", 8, 0.9, "run only by failing replays"),
        Location("agent/words.py", 2, 0.2, "spectra"),
    ]
    ranked = locate(code, runs, ranked=[spectra])
    assert ranked[0].path == "agent/client.py" and ranked[0].line == 8 and ranked[0].score == 0.9
    assert "run only by failing replays" in ranked[0].evidence and "max_tokens = 64" in ranked[0].evidence
    assert merge([[Location("a.py", 1, 0.1, "x")], [Location("a.py", 1, 0.1, "x")]]) == [
        Location("a.py", 1, 0.1, "x")
    ]
    assert len(merge([[Location("a.py", n, 0.1, "x") for n in range(1, 30)]], limit=5)) == 5


def test_a_tool_schemas_text_and_a_native_tool_call_agent_are_traced(tmp_path: Path) -> None:
    (tmp_path / "agent").mkdir()
    (tmp_path / "agent" / "__main__.py").write_text(
        'TOOLS = [{"type": "function", "function": {"name": "sh",\n'
        '          "description": "Run one shell command in the repository."}}]\n'
        'def call(messages):\n    return post({"messages": messages, "tools": TOOLS, "max_tokens": 300})\n'
    )
    tools = [
        {
            "type": "function",
            "function": {"name": "sh", "description": "Run one shell command in the repository."},
        }
    ]
    record = {
        "request": {"messages": [{"role": "user", "content": "fix it"}], "tools": tools, "max_tokens": 300},
        "response": {
            "message": {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": "1", "name": "sh", "arguments": "{}"}],
            },
            "finish_reason": "tool_calls",
        },
    }
    found = {(loc.line, loc.evidence) for loc in trace(tmp_path, [Recorded("fail", (record,))])}
    assert (
        2,
        'its text "Run one shell command in the repository." was sent in the tool schemas of 1 requests',
    ) in found
    assert (4, "every request set max_tokens = 300; replies cut at the length limit in 0 of 1") in found


def test_ties_go_first_to_a_line_more_sources_rank_then_to_each_file_in_turn() -> None:
    # Six lines tie at one score: four of a.py, two of b.py. By path alone a.py's four would fill the head;
    # in turns each file's first line comes first, and a line two sources rank leads them all.
    replays = [Location("a.py", n, 0.8, "replays") for n in (1, 2, 3, 4)] + [
        Location("b.py", n, 0.8, "replays") for n in (5, 6)
    ]
    tests = [Location("b.py", 6, 0.8, "own tests")]
    ranked = [(loc.path, loc.line) for loc in merge([replays, tests])]
    assert ranked == [("b.py", 6), ("a.py", 1), ("b.py", 5), ("a.py", 2), ("a.py", 3), ("a.py", 4)]
    assert [(loc.path, loc.line) for loc in merge([replays])] == [
        ("a.py", 1),
        ("b.py", 5),
        ("a.py", 2),
        ("b.py", 6),
        ("a.py", 3),
        ("a.py", 4),
    ]
    higher = [Location("c.py", 9, 0.9, "replays")]
    assert merge([replays, higher])[0].path == "c.py"  # a higher score still leads, whatever its sources
    # merged once already (the spectra with a dead store at a.py:3), the count holds in the next merge
    inner = merge([replays, [Location("a.py", 3, 0.8, "a dead store")]])
    outer = merge([inner, [Location("c.py", 1, 0.8, "own tests")]])
    assert [(loc.path, loc.line) for loc in outer][:2] == [("a.py", 3), ("a.py", 1)]


def test_a_field_no_literal_holds_is_traced_to_the_expression_named_like_it(tmp_path: Path) -> None:
    # 2.0 is computed (0.2 * 10): no literal holds it, and a `2` elsewhere only equals it
    (tmp_path / "agent").mkdir()
    (tmp_path / "agent" / "client.py").write_text(
        "import os\n"
        "def ask(messages):\n"
        '    hot = float(os.environ.get("T", "0.2")) * 10\n'
        '    return post({"messages": messages, "temperature": hot, "max_tokens": 512})\n'
        "def pick(parts):\n"
        "    return parts[2]\n"
    )
    record = {
        "request": {"messages": [{"role": "user", "content": "x"}], "temperature": 2.0, "max_tokens": 512},
        "response": {"message": {"role": "assistant", "content": "y"}, "finish_reason": "stop"},
    }
    found = [loc for loc in trace(tmp_path, [Recorded("fail", (record,))]) if "temperature" in loc.evidence]
    assert [loc.line for loc in found] == [4, 6]
    assert found[0].evidence.endswith("(computed here, named temperature: no literal holds the value sent)")
    assert found[0].score > found[1].score and "(a literal equal to it)" in found[1].evidence
    # where a literal named like the field holds the value, it alone is the source
    limits = [loc for loc in trace(tmp_path, [Recorded("fail", (record,))]) if "max_tokens" in loc.evidence]
    assert [(loc.line, loc.evidence.endswith("in 0 of 1")) for loc in limits] == [(4, True)]


LISTER = '''"""A lister."""


def shown(root) -> list[str]:
    return [f"--- {name} ---\\n{text}" for name, text in root.items()]


def prompt(root, job):
    files = shown(root)
    return "Do this job now, please:\\n{job}\\n\\nThe files:\\n{files}".format(job=job, files=files)
'''


def test_a_lists_repr_sent_in_failed_evaluations_ranks_the_code_that_formats_a_list(tmp_path: Path) -> None:
    (tmp_path / "agent").mkdir()
    (tmp_path / "agent" / "lister.py").write_text(LISTER)
    files = ["--- a.py ---\ndef a():\n    raise NotImplementedError\n"]
    sent = f"Do this job now, please:\nwrite a\n\nThe files:\n{files}"
    joined = "Do this job now, please:\nwrite a\n\nThe files:\n" + "\n".join(files)

    def run(outcome: str, text: str) -> Recorded:
        return Recorded(outcome, (_record([{"role": "user", "content": text}], "<act>done"),))

    failed = [run("fail", sent), run("fail", sent), run("error", joined), run("fail", joined)]
    site = [loc for loc in trace(tmp_path, [*failed, run("pass", sent)]) if "repr" in loc.evidence]
    assert [(loc.line, loc.score) for loc in site] == [(10, 0.5)]
    assert site[0].evidence.startswith("2 of 4 failed evaluations sent the model a list's repr")
    assert site[0].evidence.endswith("here files, bound to a list, is made text")
    # only passing evaluations sent one, or none did: nothing
    assert not [
        loc for loc in trace(tmp_path, [run("pass", sent), run("fail", joined)]) if "repr" in loc.evidence
    ]


SHELL = """import subprocess

BANNER = "exit status: never shown"


def run(command):
    done = subprocess.run(command, shell=True, capture_output=True, text=True)
    return f"{done.stderr}exit status: {done.returncode}"


def report(name, output):
    return f"Ran the checks of {name}:\\n{output}"
"""


def test_the_code_that_writes_an_exit_status_shown_alone_in_failures_ranks_by_their_share(
    tmp_path: Path,
) -> None:
    (tmp_path / "agent").mkdir()
    (tmp_path / "agent" / "shell.py").write_text(SHELL)
    markers = Markers.of({"exit": "exit status: {code}"})

    def run(outcome: str, output: str) -> TaskRun:
        return TaskRun("t", outcome, (Turn("```sh\npytest\n```", output), Turn("done")), markers=markers)

    failed = [
        run("fail", "exit status: 1"),
        run("fail", "3 failed\nexit status: 1"),
        run("error", "exit status: 2"),
    ]
    found = shown(tmp_path, [*failed, run("pass", "exit status: 1")])
    assert [(loc.path, loc.line, loc.score) for loc in found] == [("agent/shell.py", 8, 0.6667)]
    assert found[0].evidence.startswith("2 of 3 failed evaluations showed the model a failing command")
    assert "usual fix: show a command's error output" in found[0].evidence
    # a passing status, an agent without the marker, or only passes: nothing
    assert not shown(tmp_path, [run("fail", "exit status: 0")])
    assert not shown(tmp_path, [TaskRun("t", "fail", (Turn("x", "exit status: 1"),))])
    assert not shown(tmp_path, [run("pass", "exit status: 1")])
