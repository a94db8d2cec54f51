"""The diagnosis names one agent-level target from the map and one change (issue 33, item 1)."""

from __future__ import annotations

import json

import pytest

from evolve.llm.types import ChatRequest, Message
from evolve.meta import DiagnosisFailed, diagnose, parse_instructions
from evolve.meta.agentmap import agent_map
from evolve.meta.diagnose import SYSTEM, prompt, target_of
from evolve.meta.evidence import Evidence, Pattern
from evolve.meta.problems import Problem
from evolve.seed import copy_seed
from evolve.standins.models import ScriptedModel

BELOW_ZERO = ("Complete the function `below_zero` in `solution.py`.\n\ndef below_zero(operations: List[int]) -> bool:\n"
              "    raise NotImplementedError")
EVIDENCE = Evidence(20, 12, (Pattern("tool_error", 'tool error "python: command not found"', 18, tuple(f"HumanEval-{i}" for i in range(7)),
                                     'step 1: "```bash python solution.py ```" -> "bash: line 1: python: command not found"'),))


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
    return json.dumps({"target": target, "change": change, "problem": "python is missing", "cause": "only python3"})


def test_a_target_from_the_map_is_kept_canonical(seed_map) -> None:
    complete, model = answer(reply("agent/tools.py::Workspace.bash"))
    found = diagnose(complete, Problem("task", "The agent crashed.", "t1", BELOW_ZERO), seed_map, evidence=EVIDENCE)
    assert (found.target, found.files) == ("agent/tools.py:Workspace.bash", ("agent/tools.py",))
    assert len(model.requests) == 1
    text = found.render()
    assert text.startswith("Problem: python is missing") and target_of(text) == "agent/tools.py:Workspace.bash"
    assert 'tool error "python: command not found": 18 times in 7 tasks' in text  # the evidence goes along
    assert json.loads(json.dumps(found.to_json()))["target"] == "agent/tools.py:Workspace.bash"


def test_task_code_as_target_is_asked_again_then_refused(seed_map) -> None:
    problem = Problem("task", "The agent changed the code but the task's tests still fail.", "t1", BELOW_ZERO)
    complete, model = answer(reply("solution.py:below_zero", "return True when the balance drops below zero"),
                             reply("agent/prompts.py:SYSTEM", "tell it to run python3, never python"))
    found = diagnose(complete, problem, seed_map)
    assert found.target == "agent/prompts.py:SYSTEM" and len(model.requests) == 2
    again = model.requests[1].messages[-1].content or ""
    assert "'solution.py:below_zero' is not part of the agent" in again and "target, change, problem, cause" in again
    assert model.requests[1].temperature is not None  # the retry is sampled hotter

    stubborn, model = answer(reply("below_zero"), reply(""), "the agent is fine")  # never a usable target
    with pytest.raises(DiagnosisFailed, match="no usable diagnosis after 3 replies") as refused:
        diagnose(stubborn, problem, seed_map)
    assert len(model.requests) == 3 and '"target" is missing' in str(refused.value)


def test_a_change_about_the_task_function_is_refused_even_with_an_agent_target(seed_map) -> None:
    with pytest.raises(ValueError, match=r"about the task's own code \(below_zero\)"):
        parse_instructions(reply("agent/loop.py:Agent.run", "make below_zero return True"), seed_map, BELOW_ZERO)
    ok = parse_instructions(reply("agent/loop.py:Agent.run", "check the solution before done"), seed_map, BELOW_ZERO)
    assert ok.target == "agent/loop.py:Agent.run"


@pytest.mark.parametrize(("written", "why"), [
    # the 0.5B model's first two replies on the engine's prompt (the probe in the README)
    ('{"target": "agent/__init__.py", "change": "Make the agent edit a file."}', "is not part of the agent"),
    ('{"target": "agent/__main__.py:main", "change": "No file changed"}', "too short"),
    ('{"target": "agent/loop.py:Agent.run", "change": "The agent changed no file."}', "repeats what went wrong"),
])
def test_empty_files_short_changes_and_echoes_are_refused(seed_map, written: str, why: str) -> None:
    with pytest.raises(ValueError, match=why):
        parse_instructions(written, seed_map, echoes=["The agent changed no file."])


@pytest.mark.parametrize(("written", "canonical"), [
    ("Target: agent/prompts.py:SYSTEM\nChange: add one line: run python3, not python", "agent/prompts.py:SYSTEM"),
    ('{"target": "agent/commands.py:solve(agent, problem, budget)", "change": "show every file at once"}',
     "agent/commands.py:solve"),
    ('{"change": "say run python3, not python", "files": ["agent/prompts.py"]}', "agent/prompts.py"),  # one file
])
def test_replies_small_models_write_are_read(seed_map, written: str, canonical: str) -> None:
    assert parse_instructions(written, seed_map).target == canonical


def test_the_prompt_shows_evidence_and_map_and_no_format_prose_to_echo(seed_map) -> None:
    messages = prompt(Problem("task", "The agent crashed.", "t1", BELOW_ZERO), seed_map, EVIDENCE)
    user = messages[1]["content"]
    assert user.startswith("What went wrong, counted from the agent's transcripts:\nComputed from 20 evaluations")
    assert "  agent/tools.py:Workspace.bash(command, timeout)  [lines " in user
    for text in (SYSTEM, user):
        assert "```" not in text.replace(EVIDENCE.patterns[0].excerpt, "")  # no fence to echo
        assert "path/to" not in text  # no placeholder path to copy


def test_with_no_usable_reply_the_instructions_are_computed_from_the_evidence(seed_map) -> None:
    echo = json.dumps({"target": "agent/__main__.py", "change": "The agent changed no file."})
    complete, model = answer(echo)  # the 0.5B model's reply in 3 trials of 3 (README)
    problem = Problem("task", "The agent changed no file.", "t1", BELOW_ZERO)
    found = diagnose(complete, problem, seed_map, evidence=EVIDENCE)
    assert len(model.requests) == 3 and found.source == "evidence"
    assert found.target == "agent/tools.py:Workspace.bash"  # where tool errors arise in the seed
    assert found.change.startswith('Change agent/tools.py:Workspace.bash so that this no longer happens: tool error '
                                   '"python: command not found": 18 times in 7 of 20 tasks (e.g. step 1: ')
    assert target_of(found.render()) == found.target and found.to_json()["source"] == "evidence"
    # a pattern whose part the agent no longer has points nowhere: the next one is taken, else refusal
    renamed = agent_map_without(seed_map, "agent/tools.py:Workspace.bash")
    with pytest.raises(DiagnosisFailed):
        diagnose(answer(echo)[0], problem, renamed, evidence=EVIDENCE)


def agent_map_without(found, target: str):
    from dataclasses import replace

    path, _, name = target.partition(":")
    return replace(found, files=tuple(replace(f, symbols=tuple(s for s in f.symbols if s.name != name))
                                      if f.path == path else f for f in found.files))


@pytest.mark.parametrize("defect, kind, line", [
    ("reply-cut", "reply_cut", '"max_tokens": 64'),
    ("context-starved", "context_cut", "> self.context_chars // 10:"),
    ("file-hidden", "unseen_file", "budget: int = 0"),
    ("check-dropped", "no_check", 'files=listing), "")'),
    ("python-blocks-ignored", "unparsable_reply", 'block[1].lower() in ("py",)'),
])
def test_computed_instructions_carry_the_lines_that_decide_their_pattern(tmp_path, defect, kind, line) -> None:
    """A small model transcribes a change it is shown well and designs one badly: the computed instructions
    show the target's lines that decide the pattern (the planted defect's own line among them), unnumbered,
    under a header naming the file and the line numbers, and the seed's improve then asks for those lines."""
    from evolve.bench.selfrepair import DEFECTS, plant
    from evolve.meta.diagnose import LINES_HEADER, deciding_lines, from_evidence

    code = plant(DEFECTS[defect], None, tmp_path / defect)
    found = agent_map(code)
    evidence = Evidence(4, 4, (Pattern(kind, "a pattern", 3, ("t1", "t2")),))
    computed = from_evidence(evidence, found)
    assert computed is not None and computed.kind == kind
    shown = deciding_lines(code, computed)
    header, *lines = shown.lines.splitlines()
    assert header.startswith(LINES_HEADER.split("{")[0]) and computed.target.partition(":")[0] in header
    assert any(line in text for text in lines) and 1 <= len(lines) <= 4
    assert not any(text.lstrip()[:1].isdigit() or text.lstrip().startswith(('"""', "#")) for text in lines)
    source = (code / computed.target.partition(":")[0]).read_text().splitlines()
    numbers = [int(n) for n in header.rsplit("lines ", 1)[1].rstrip("):").split(", ")]
    assert [source[n - 1] for n in numbers] == lines  # the header's numbers are the parent's lines
    assert shown.lines in shown.render() and shown.to_json()["kind"] == kind


def test_instructions_without_a_pattern_or_whose_target_is_gone_carry_no_lines(tmp_path, seed_map) -> None:
    from evolve.meta.diagnose import Instructions, deciding_lines

    code = copy_seed(tmp_path / "agent")
    model_made = Instructions("p", "c", "run python as python3", ("agent/tools.py",), "agent/tools.py:Workspace.bash")
    assert deciding_lines(code, model_made) == model_made
    gone = Instructions("p", "c", "x", (), "agent/tools.py:nowhere", kind="timeout")
    assert deciding_lines(code, gone) == gone


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
    many = AgentMap((FileMap("agent/big.py", 9, tuple(Symbol(f"name_{i:05d}", "function", i, i) for i in range(2000))),))
    large = reply_format(many)
    assert large["json_schema"]["schema"]["properties"]["target"] == {"type": "string"}
    assert len(json.dumps(large)) < MAX_FORMAT_CHARS


@pytest.mark.parametrize(("defect", "notes"), [
    ("check-dropped", ("`check` is computed on line 40 and never used.", 'Line 41 passes an empty `""` to `agent.run`.')),
    ("file-hidden", (("`budget` is 0 unless a caller passes it (line 29), so `sum(map(len, shown)) + len(text) <= budget` "
                      "(line 37) lets nothing of any size through: a default above 0 lets something through."),)),
])
def test_computed_instructions_say_what_the_targets_code_shows(tmp_path, defect, notes) -> None:
    """A value computed and never used (and a call given an empty value beside it), a bound of 0: lint-like
    facts of the target, in the parent's line numbers."""
    from evolve.bench.selfrepair import DEFECTS, plant
    from evolve.meta.diagnose import Instructions, deciding_lines

    code = plant(DEFECTS[defect], None, tmp_path / defect)
    shown = deciding_lines(code, Instructions("p", "c", "x", ("agent/commands.py",), "agent/commands.py:solve",
                                              kind="no_check"))
    assert shown.notes == notes and "What its code shows:\n" + "".join(f"- {n}\n" for n in notes) in shown.render()
    assert shown.to_json()["notes"] == list(notes)


def test_no_edit_points_at_the_agents_ask_for_the_edit_and_an_empty_one_is_noted(tmp_path) -> None:
    """"The agent changed no file": the seed asks for the edit in `repairs.NUDGE`, so that is the target (an
    agent without it: `solve`); emptied (nudge-dropped), its code note says it adds nothing."""
    from evolve.bench.selfrepair import DEFECTS, plant
    from evolve.meta.diagnose import deciding_lines, from_evidence
    from evolve.meta.evidence import REMEDIES

    code = plant(DEFECTS["nudge-dropped"], None, tmp_path / "nudge-dropped")
    found = agent_map(code)
    evidence = Evidence(4, 1, (Pattern("no_edit", "the agent changed no file", 1, ("t1",)),))
    computed = deciding_lines(code, from_evidence(evidence, found))
    assert computed.target == "agent/repairs.py:NUDGE" and computed.kind == "no_edit"
    assert computed.notes == ("`NUDGE` is an empty string (line 11): wherever it is added to a text, it adds nothing.",)
    assert "ask for the edit explicitly" in computed.change and REMEDIES["no_edit"] in computed.change
    # a constant of a line or few is decided by its own lines: improve asks for those, not for a file
    assert computed.lines == 'The lines that decide it (agent/repairs.py, lines 11):\nNUDGE = ""  # 0.5B: 12 of 12 did, 7 without'
    fallback = from_evidence(evidence, agent_map_without(found, "agent/repairs.py:NUDGE"))
    assert fallback is not None and fallback.target == "agent/commands.py:solve"


def test_a_reply_form_the_parser_drops_points_at_its_word_test_and_names_the_missing_word(tmp_path) -> None:
    """"a ```python block the agent could not act on": the seed accepts reply forms in `repairs.parse` (an
    agent without it: `loop.parse`); a test against literal words that leaves out "python" is noted, with
    its line; the intact seed's test holds the word, so it gets no note, and another word does."""
    from evolve.bench.selfrepair import DEFECTS, plant
    from evolve.meta.diagnose import deciding_lines, from_evidence

    def computed(code, word: str):
        label = f"a ```{word} block the agent could not act on"
        return deciding_lines(code, from_evidence(Evidence(6, 6, (Pattern("unparsable_reply", label, 8, ("t1",)),)),
                                                  agent_map(code)))

    planted = plant(DEFECTS["python-blocks-ignored"], None, tmp_path / "planted")
    found = computed(planted, "python")
    assert found.target == "agent/repairs.py:parse"
    assert found.lines == ('The lines that decide it (agent/repairs.py, lines 16):\n'
                           '    if block and block[1].lower() in ("py",):')
    assert found.notes == (('`block[1].lower() in ("py",)` (line 16) leaves out "python", the word that opens the '
                            'replies the agent could not act on: with "python" among its words, such a reply is an '
                            'action.'),)
    intact = copy_seed(tmp_path / "intact")
    assert computed(intact, "python").notes == ()
    assert computed(intact, "Text").notes[0].startswith('`block[1].lower() in ("python", "py", "")` (line 16) leaves '
                                                        'out "text"')
    without = from_evidence(Evidence(6, 6, (Pattern("unparsable_reply", "a reply the agent could not act on", 1,
                                                    ("t1",)),)), agent_map_without(agent_map(planted),
                                                                                   "agent/repairs.py:parse"))
    assert without is not None and without.target == "agent/loop.py:parse"


def test_the_intact_seed_gives_no_code_notes(tmp_path) -> None:
    from evolve.meta.agentmap import source_of
    from evolve.meta.codenotes import code_notes

    code = copy_seed(tmp_path / "agent")
    for file in agent_map(code).files:
        for symbol in file.symbols:
            if symbol.kind in ("function", "method", "constant"):
                assert code_notes(source_of(code, f"{file.path}:{symbol.name}"), symbol.start) == [], symbol.name
    assert code_notes("def f(limit=0, *, most=0):\n    x = 1\n    return [n for n in range(9) if n < most]\n", 5) == [
        "`x` is computed on line 6 and never used.",
        ("`most` is 0 unless a caller passes it (line 5), so `n < most` (line 7) lets nothing of any size through: a "
         "default above 0 lets something through.")]
    assert code_notes("X = 1\n", 1) == [] and code_notes("def broken(:\n", 1) == []
    assert code_notes('X: str = ""\n', 4) == ["`X` is an empty string (line 4): wherever it is added to a text, it adds nothing."]
    assert code_notes('def f(run):\n    return run("", None)\n', 1) == []  # an empty argument alone is no note


def test_code_notes_on_hostile_agent_code_are_none_or_short() -> None:
    """The notes read agent-written code on the host: nesting too deep for the parser, a null byte and a
    comparison too deep to unparse give no note or a short one, never an exception."""
    from evolve.meta.codenotes import SHOWN_CHARS, code_notes

    assert code_notes("def f(x):\n    y = " + "-" * 300_000 + "x\n", 1) == []
    assert code_notes("def f(x):\n    return x\x00\n", 1) == []
    (note,) = code_notes("def f(x, budget=0):\n    return " + "x + " * 900 + "x <= budget\n", 1)  # unparse recurses
    assert note.endswith("x + x <= budget` (line 2) lets nothing of any size through: a default above 0 lets "
                         "something through.") and len(note) < SHOWN_CHARS + 200
