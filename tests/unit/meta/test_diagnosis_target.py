"""The diagnosis names one agent-level target from the map and one change."""

from __future__ import annotations

import json

import pytest

from evolve.llm.types import ChatRequest, Message
from evolve.meta import DiagnosisFailed, diagnose, parse_instructions
from evolve.meta.agentmap import agent_map
from evolve.meta.diagnose import SYSTEM, prompt, target_of
from evolve.meta.evidence import Evidence, Pattern
from evolve.meta.locations import Location
from evolve.meta.problems import Problem
from evolve.seed import copy_seed
from evolve.standins.models import ScriptedModel

BELOW_ZERO = (
    "Complete the function `below_zero` in `solution.py`.\n\ndef below_zero(operations: List[int]) -> bool:\n"
    "    raise NotImplementedError"
)
EVIDENCE = Evidence(
    20,
    12,
    (
        Pattern(
            "tool_error",
            'tool error "python: command not found"',
            18,
            tuple(f"HumanEval-{i}" for i in range(7)),
            'step 1: "```bash python solution.py ```" -> "bash: line 1: python: command not found"',
        ),
    ),
)


@pytest.fixture(scope="module")
def seed_map(tmp_path_factory):
    root = tmp_path_factory.mktemp("seed-map") / "agent"
    copy_seed(root)
    return agent_map(root)


def answer(*replies: str):
    """A `complete` function served by the shipped scripted model; the model keeps its requests."""
    model = ScriptedModel(list(replies))

    def complete(messages, temperature=None):
        request = ChatRequest(messages=tuple(Message(**m) for m in messages), temperature=temperature)
        return model.complete(request).message.content or ""

    return complete, model


def reply(target: str, change: str = "run python as python3 in the shell tool") -> str:
    return json.dumps(
        {"target": target, "change": change, "problem": "python is missing", "cause": "only python3"}
    )


def test_a_target_from_the_map_is_kept_canonical(seed_map) -> None:
    complete, model = answer(reply("agent/tools.py::Workspace.bash"))
    found = diagnose(
        complete, Problem("task", "The agent crashed.", "t1", BELOW_ZERO), seed_map, evidence=EVIDENCE
    )
    assert (found.target, found.files) == ("agent/tools.py:Workspace.bash", ("agent/tools.py",))
    assert len(model.requests) == 1
    text = found.render()
    assert (
        text.startswith("Problem: python is missing") and target_of(text) == "agent/tools.py:Workspace.bash"
    )
    assert 'tool error "python: command not found": 18 times in 7 tasks' in text  # the evidence goes along
    assert json.loads(json.dumps(found.to_json()))["target"] == "agent/tools.py:Workspace.bash"


def test_task_code_as_target_is_asked_again_then_refused(seed_map) -> None:
    problem = Problem("task", "The agent changed the code but the task's tests still fail.", "t1", BELOW_ZERO)
    complete, model = answer(
        reply("solution.py:below_zero", "return True when the balance drops below zero"),
        reply("agent/prompts.py:SYSTEM", "tell it to run python3, never python"),
    )
    found = diagnose(complete, problem, seed_map)
    assert found.target == "agent/prompts.py:SYSTEM" and len(model.requests) == 2
    again = model.requests[1].messages[-1].content or ""
    assert (
        "'solution.py:below_zero' is not part of the agent" in again
        and "target, change, problem, cause" in again
    )
    assert model.requests[1].temperature is not None  # the retry is sampled hotter

    stubborn, model = answer(reply("below_zero"), reply(""), "the agent is fine")  # never a usable target
    with pytest.raises(DiagnosisFailed, match="no usable diagnosis after 3 replies") as refused:
        diagnose(stubborn, problem, seed_map)
    assert len(model.requests) == 3 and '"target" is missing' in str(refused.value)


def test_a_change_about_the_task_function_is_refused_even_with_an_agent_target(seed_map) -> None:
    with pytest.raises(ValueError, match=r"about the task's own code \(below_zero\)"):
        parse_instructions(
            reply("agent/loop.py:Agent.run", "make below_zero return True"), seed_map, BELOW_ZERO
        )
    ok = parse_instructions(
        reply("agent/loop.py:Agent.run", "check the solution before done"), seed_map, BELOW_ZERO
    )
    assert ok.target == "agent/loop.py:Agent.run"


@pytest.mark.parametrize(
    ("written", "why"),
    [
        # the 0.5B model's first two replies on the engine's prompt (the probe in the README)
        (
            '{"target": "agent/__init__.py", "change": "Make the agent edit a file."}',
            "is not part of the agent",
        ),
        ('{"target": "agent/__main__.py:main", "change": "No file changed"}', "too short"),
        (
            '{"target": "agent/loop.py:Agent.run", "change": "The agent changed no file."}',
            "repeats what went wrong",
        ),
    ],
)
def test_empty_files_short_changes_and_echoes_are_refused(seed_map, written: str, why: str) -> None:
    with pytest.raises(ValueError, match=why):
        parse_instructions(written, seed_map, echoes=["The agent changed no file."])


@pytest.mark.parametrize(
    ("written", "canonical"),
    [
        (
            "Target: agent/prompts.py:SYSTEM\nChange: add one line: run python3, not python",
            "agent/prompts.py:SYSTEM",
        ),
        (
            (
                '{"target": "agent/commands.py:solve(agent, problem, budget)", "change": "show every file at '
                'once"}'
            ),
            "agent/commands.py:solve",
        ),
        # one file
        ('{"change": "say run python3, not python", "files": ["agent/prompts.py"]}', "agent/prompts.py"),
    ],
)
def test_replies_small_models_write_are_read(seed_map, written: str, canonical: str) -> None:
    assert parse_instructions(written, seed_map).target == canonical


def test_the_prompt_shows_evidence_and_map_and_no_format_prose_to_echo(seed_map) -> None:
    messages = prompt(Problem("task", "The agent crashed.", "t1", BELOW_ZERO), seed_map, EVIDENCE)
    user = messages[1]["content"]
    assert user.startswith(
        "What went wrong, counted from the agent's transcripts:\nComputed from 20 evaluations"
    )
    assert "  agent/tools.py:Workspace.bash(command, timeout)  [lines " in user
    for text in (SYSTEM, user):
        assert "```" not in text.replace(EVIDENCE.patterns[0].excerpt, "")  # no fence to echo
        assert "path/to" not in text  # no placeholder path to copy


CLIENT = '''"""A small agent's model client (not the seed: the test does not depend on the seed's text)."""


class Client:
    def ask(self, messages):
        body = {"messages": messages,
                "max_tokens": 64}
        return self.send(body)

    def send(self, body):
        raise NotImplementedError
'''
TOP = Location(
    "agent/client.py", 7, 0.75, "every request set max_tokens = 64; replies cut at the length limit in 3 of 4"
)
OTHERS = (
    Location("agent/client.py", 5, 0.1, "a line run by failing replays only"),
    Location("agent/words.py", 1, 0.05, 'its text "You are Quill" was sent in system messages of 4 requests'),
)


@pytest.fixture
def small_agent(tmp_path):
    (tmp_path / "agent").mkdir()
    (tmp_path / "agent" / "client.py").write_text(CLIENT)
    (tmp_path / "agent" / "words.py").write_text(
        'GREETING = "You are Quill, a terse assistant that edits files."\n'
    )
    return tmp_path


def test_computed_instructions_name_the_top_ranked_location_and_show_its_lines(small_agent) -> None:
    """Where the model gives no usable reply (the 0.5B model's echo, 3 trials of 3) or the run prefers the
    data, the instructions name the top-ranked location, never a table's target: its symbol, its evidence, its
    line and those of others ranked in its file, unnumbered, under a header with their numbers in the
    parent."""
    from evolve.meta.diagnose import LINES_HEADER

    echo = json.dumps({"target": "agent/__main__.py", "change": "The agent changed no file."})
    complete, model = answer(echo)
    problem = Problem("task", "The agent changed no file.", "t1", BELOW_ZERO)
    found = diagnose(
        complete,
        problem,
        agent_map(small_agent),
        evidence=EVIDENCE,
        locations=(TOP, *OTHERS),
        code=small_agent,
    )
    assert len(model.requests) == 3 and found.source == "evidence"
    assert found.target == "agent/client.py:Client.ask" and found.files == ("agent/client.py",)
    assert found.change == (
        "Change line 7 of agent/client.py (in Client.ask) so that this no longer happens: every "
        "request set max_tokens = 64; replies cut at the length limit in 3 of 4."
    )
    assert found.problem.startswith(TOP.evidence) and "tool error" in found.problem  # the widest pattern too
    assert found.lines == (
        LINES_HEADER.format(file="agent/client.py", numbers="5, 7")
        + '\n    def ask(self, messages):\n                "max_tokens": 64}'
    )
    assert target_of(found.render()) == found.target and found.lines in found.render()
    recorded = found.to_json()
    assert recorded["source"] == "evidence" and recorded["locations"][0] == TOP.to_json()
    assert [Location.from_json(item) for item in recorded["locations"]] == [TOP, *OTHERS]
    # asked to prefer the data, the model is not asked at all
    complete, model = answer(echo)
    first = diagnose(
        complete,
        problem,
        agent_map(small_agent),
        evidence=EVIDENCE,
        evidence_first=True,
        locations=(TOP,),
        code=small_agent,
    )
    assert model.requests == [] and first.target == "agent/client.py:Client.ask"
    # no location in the agent's map: nothing to compute, so the diagnosis fails
    with pytest.raises(DiagnosisFailed):
        diagnose(
            answer(echo)[0],
            problem,
            agent_map(small_agent),
            evidence=EVIDENCE,
            locations=(Location("tests/test_x.py", 1, 1.0, "x"),),
            code=small_agent,
        )


def test_the_model_is_shown_the_ranked_locations_with_their_evidence_and_lines(small_agent) -> None:
    complete, model = answer(reply("agent/client.py:Client.ask", "ask for replies of 1024 tokens, not 64"))
    found = diagnose(
        complete,
        Problem("task", "The agent crashed.", "t1", BELOW_ZERO),
        agent_map(small_agent),
        evidence=EVIDENCE,
        locations=(TOP, *OTHERS),
        code=small_agent,
    )
    shown = model.requests[0].messages[1].content or ""
    assert (
        "Where the recorded data points in this agent's code, most suspicious first:\n"
        "1. agent/client.py line 7 (in Client.ask), score 0.75: every request set max_tokens = 64; replies "
        "cut at "
        'the length limit in 3 of 4\n   "\\"max_tokens\\": 64}"\n2. agent/client.py line 5'
    ) in shown
    assert found.source == "model" and found.locations == (TOP, *OTHERS)


def test_the_reply_format_names_every_target_of_the_map_and_bounds_each_text(seed_map) -> None:
    from evolve.meta.agentmap import AgentMap, FileMap, Symbol
    from evolve.meta.diagnose import FIELDS, MAX_FORMAT_CHARS, reply_format

    shaped = reply_format(seed_map)
    schema = shaped["json_schema"]["schema"]
    assert shaped["type"] == "json_schema" and schema["required"] == list(FIELDS)
    assert schema["properties"]["target"]["enum"] == list(seed_map.targets())
    assert "agent/tools.py:Workspace.bash" in schema["properties"]["target"]["enum"]
    assert all(schema["properties"][key]["maxLength"] > 0 for key in FIELDS[1:])
    # a map too large for the gateway's schema cap names no targets (the reply is checked against it as ever)
    many = AgentMap(
        (FileMap("agent/big.py", 9, tuple(Symbol(f"name_{i:05d}", "function", i, i) for i in range(2000))),)
    )
    large = reply_format(many)
    assert large["json_schema"]["schema"]["properties"]["target"] == {"type": "string"}
    assert len(json.dumps(large)) < MAX_FORMAT_CHARS
