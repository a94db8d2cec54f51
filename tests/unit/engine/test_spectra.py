"""Execution spectra of an agent on a replayed pair (evolve.engine.spectra), on process sandboxes: the tiny
agent of spectra_cases, recorded passing one task and failing another, re-run under coverage with every
model reply from its recording."""

from __future__ import annotations

from evolve.engine.context import JobContext
from evolve.engine.spectra import (
    Spectra,
    agent_lines,
    sent_text,
    spectra_locations,
    spectra_replays,
    static_lines,
)
from evolve.llm.exchanges import Exchange
from evolve.llm.gateway import Gateway
from evolve.llm.types import ChatRequest, ChatResponse, Message
from evolve.meta.similar import DEVIANT_SCORE
from evolve.sandbox.factory import ProcessSandboxes
from tests.unit.engine.spectra_cases import (
    FAILING_ONLY,
    PIPE_LITERAL,
    PIPED,
    RUNS_COMMAND,
    SETTINGS,
    own_tests_ran,
    recorded_pair,
)


def test_the_line_only_the_failing_replay_runs_ranks_first(tmp_path) -> None:
    run, node, tasks = recorded_pair(tmp_path)
    replays = spectra_replays(run, node, tasks)
    assert [(r.task.id, r.outcome) for r in replays] == [("fails", "fail"), ("passes", "pass")]
    code = run.checkout(node, tmp_path / "code")
    with Gateway(replay_from=tmp_path) as unused:  # every replay opens a gateway of its own
        ctx = JobContext("spectra", node, code, tmp_path / "logs", ProcessSandboxes(), unused)
        ranked, ran = spectra_locations(ctx, replays, SETTINGS)
    run.close()
    # the lines the failing replay ran, kept by task (the passing one's are not: only failures are replayed
    # to check a candidate's behaviour)
    assert list(ran) == ["fails"] and FAILING_ONLY in ran["fails"] and RUNS_COMMAND in ran["fails"]
    first = ranked[0]
    assert (first.path, first.line) == FAILING_ONLY
    assert first.score == 1.0 and "run by 1 of 1 failing replays and 0 of 1 passing" in first.evidence
    by_line = {(location.path, location.line): location for location in ranked}
    # run by both replays: ranked below, with what its command's output came to
    shared = by_line[RUNS_COMMAND]
    assert shared.score < first.score
    assert "incl. 1 traceback" in shared.evidence and ", 0 reached the model" in shared.evidence
    # and what the line read as the failing replay ran it (the module and its function left out)
    assert '; as the failing replay of fails ran it: command = "python3 -c ' in shared.evidence
    assert ", workdir = '" in shared.evidence and "subprocess" not in shared.evidence.split(" ran it: ")[1]
    assert all(location.path == "agent/__main__.py" for location in ranked)  # the agent's files only


def test_only_lines_of_the_agents_own_python_files_count(tmp_path) -> None:
    code = tmp_path / "code"
    (code / "agent").mkdir(parents=True)
    (code / "agent" / "loop.py").write_text("a = 1\nb = 2\n")
    (code / "notes.txt").write_text("x\n" * 10)
    (tmp_path / "outside.py").write_text("x = 1\n" * 10)
    (code / "agent" / "linked.py").symlink_to(tmp_path / "outside.py")
    accepts = agent_lines(code)
    assert (
        accepts(("agent/loop.py", 2))
        and not accepts(("agent/loop.py", 3))
        and not accepts(("agent/loop.py", 0))
    )
    assert not accepts(("notes.txt", 1)) and not accepts(("agent/linked.py", 1))


def test_the_text_sent_is_each_non_assistant_message_once() -> None:
    request = ChatRequest(
        messages=(
            Message(role="system", content="rules"),
            Message(role="user", content="do it"),
            Message(role="assistant", content="my own words"),
            Message(role="tool", content="out"),
        )
    )
    exchange = Exchange(
        seq=1,
        job_id="1",
        node_id="n",
        role="solve",
        request_sha256="0",
        request=request,
        response=ChatResponse(message=Message(role="assistant", content="ok"), model="m"),
        response_id="r",
        created=0,
    )
    row = exchange.model_dump_json()
    assert sent_text(f"{row}\n\n{{broken\n{row}\n") == "rules\ndo it\nout"


def test_the_agents_own_tests_rank_the_line_only_its_failing_test_runs_first(tmp_path) -> None:
    code = tmp_path / "code"
    (code / "agent").mkdir(parents=True)
    (code / "tests").mkdir()
    (code / "agent" / "__init__.py").write_text("")
    (code / "agent" / "calc.py").write_text(
        "def add(a, b):\n    if a > 10:\n        return a - b\n    return a + b\n"
    )
    (code / "tests" / "test_calc.py").write_text(
        "from agent.calc import add\n\n\ndef test_small():\n    assert add(1, 2) == 3\n\n\n"
        "def test_large():\n    assert add(11, 2) == 13\n"
    )
    (tmp_path / "logs").mkdir()
    with Gateway(replay_from=tmp_path) as unused:  # no model: the tests ask none
        ctx = JobContext("spectra", "n", code, tmp_path / "logs", ProcessSandboxes(), unused)
        result = Spectra((), SETTINGS, tests_image="evolve-base:latest")(ctx)
    assert result.error == "" and result.tests == 2
    assert result.failing_tests == ("tests/test_calc.py::test_large",)
    first = result.locations[0]
    assert (first.path, first.line, first.score) == ("agent/calc.py", 3, 1.0)
    assert "failing there: tests/test_calc.py::test_large (assert 9 == 13)" in first.evidence
    assert first.evidence.endswith("; as tests/test_calc.py::test_large ran it: a = 11, b = 2")
    assert all(not location.path.startswith("tests/") for location in result.locations)
    assert result.to_json()["failing_tests"] == ["tests/test_calc.py::test_large"]


BOXED = """class Box:
    def __init__(self, n):
        self.n = n
        self.reads = []

    @property
    def size(self):
        self.reads.append(1)
        return self.n


def add(a, b):
    box = Box(a)
    if box.size > 10 and box.reads == [1] and box.n:
        return a - b
    return a + b
"""


def test_the_values_a_failing_test_shows_are_read_without_running_the_agents_code(tmp_path) -> None:
    # Reading `box.size` runs the property, which the line's own check counts: had the probe read it, the
    # test would take the other branch and pass. It fails as it does untraced, and the values omit it.
    result = own_tests_ran(
        tmp_path,
        BOXED,
        "from agent.calc import Box, add\n\n\ndef test_small():\n    assert add(1, 2) == 3\n\n\n"
        "def test_large():\n    assert add(11, 2) == 13\n\n\ndef test_box():\n    assert Box(1).n == 1\n",
    )
    assert result.failing_tests == ("tests/test_calc.py::test_large",)
    by_line = {location.line: location.evidence for location in result.locations}
    assert "(assert 9 == 13)" in by_line[15]
    assert by_line[15].endswith("ran it: a = 11, b = 2")
    # as the line was about to run: the property not yet read, by the line or by the probe
    checked = by_line[14].split(" ran it: ", 1)[1]
    assert checked.startswith("box.n = 11, box.reads = [], box = <agent.calc.Box object at "), checked
    assert "box.size" not in checked


DROPPED = """def scaled(a, factor):
    product = a * factor
    return a


def unused(a):
    lost = a
    return a
"""


def test_a_value_a_failing_test_computed_and_dropped_ranks_the_statement_after_it(tmp_path) -> None:
    # Both tests run every line of `scaled`: the spectra cannot tell its lines apart, the dead store can.
    result = own_tests_ran(
        tmp_path,
        DROPPED,
        "from agent.calc import scaled\n\n\ndef test_zero():\n    assert scaled(0, 5) == 0\n\n\n"
        "def test_scaled():\n    assert scaled(2, 3) == 6\n",
    )
    assert result.failing_tests == ("tests/test_calc.py::test_scaled",)
    ranked = [(location.line, location.score) for location in result.locations]
    assert ranked == [(3, 1.0), (2, 0.9)]  # the store no failing test ran (line 7) is not ranked
    first = result.locations[0]
    assert first.evidence.startswith("`product` is bound at line 2 (in `scaled`) and never read")
    assert "; failing there: tests/test_calc.py::test_scaled (assert 2 == 6)" in first.evidence
    assert first.evidence.endswith("; as tests/test_calc.py::test_scaled ran it: a = 2")
    assert first.tests == ("tests/test_calc.py::test_scaled",)


KEPT = """class Meter:
    def __init__(self):
        self.scale = 1

    def set_up(self, scale):
        note = "set"
        return self

    def read(self, x):
        return x * self.scale
"""


def test_a_field_a_failing_test_read_and_only_ever_set_to_a_constant_ranks_the_local_of_its_name(
    tmp_path,
) -> None:
    # Both tests run every line: the spectra cannot tell them apart; the field's constant can, and the
    # screen's `field` edit at the ranked line is the fix.
    result = own_tests_ran(
        tmp_path,
        KEPT,
        "from agent.calc import Meter\n\n\ndef test_unit():\n    assert Meter().set_up(1).read(3) == 3\n\n\n"
        "def test_scaled():\n    assert Meter().set_up(2).read(3) == 6\n",
        screen=40,
    )
    assert result.failing_tests == ("tests/test_calc.py::test_scaled",)
    first = result.locations[0]
    assert (first.line, first.score) == (6, 2.0)  # the screen's kept edit, at the ranked binder
    said = "`self.scale` of `Meter` is read (line 10) but only ever set to 1; `set_up` binds"
    assert said in first.evidence
    assert "inserted: self.scale = scale" in result.screen.kept[0].edit.change


def test_a_pipeline_that_hid_a_failure_ranks_the_literal_that_wrote_the_pipe(tmp_path) -> None:
    run, node, tasks = recorded_pair(tmp_path, agent=PIPED)
    code = run.checkout(node, tmp_path / "code")
    with Gateway(replay_from=tmp_path) as unused:
        ctx = JobContext("spectra", node, code, tmp_path / "logs", ProcessSandboxes(), unused)
        ranked, _ = spectra_locations(ctx, spectra_replays(run, node, tasks), SETTINGS)
    run.close()
    by_line = {(location.path, location.line): location for location in ranked}
    literal = by_line[PIPE_LITERAL]
    assert literal.score == 1.0
    assert literal.evidence.startswith("1 of the 1 pipelines that exited 0 in failing replays")
    assert (
        "2>&1 | tail -n 5" in literal.evidence and "a pipeline's exit status is its last" in literal.evidence
    )


def test_the_static_lines_rank_a_deviant_a_failing_run_ran_and_leave_the_agents_tests_alone(tmp_path) -> None:
    reader = (
        "def size(root, name):\n    return len((root / name).read_text('utf-8', 'replace'))\n\n\n"
        "def show(root, name):\n    return (root / name).read_text('latin-1', 'replace').strip()\n\n\n"
        "def lines(root, name):\n    return (root / name).read_text('utf-8', 'replace').splitlines()\n"
    )
    (tmp_path / "agent").mkdir()
    (tmp_path / "agent" / "reader.py").write_text(reader)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_reader.py").write_text(reader)  # the same deviant in a test: not ranked
    ran = frozenset({("agent/reader.py", 6), ("tests/test_reader.py", 6)})
    found = [(x.path, x.line, x.score) for x in static_lines(tmp_path, ran) if "other places" in x.evidence]
    assert found == [("agent/reader.py", 6, DEVIANT_SCORE)]
    assert not [
        x for x in static_lines(tmp_path, frozenset({("agent/reader.py", 2)})) if "other places" in x.evidence
    ]
