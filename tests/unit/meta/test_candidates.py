"""Candidate children: the temperature spread, each cheap filter on its own, and an expansion with k
candidates through the real pipeline (process sandboxes, scripted models behind a real gateway): each
candidate is recorded with its verdict, the child is the first survivor, and `require_code` refuses
prompt-only edits.

The test agent (the expansion test's) asks the model once and runs its reply as a bash script in the
directory it edits; its request carries the candidate's `EVOLVE_TEMPERATURE`, so the scripted model answers
each candidate its own way."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evolve.archive.candidates import node_candidates, read_candidates
from evolve.archive.edits import EditKind
from evolve.engine.expand import ExpandSettings, Expansion
from evolve.meta.candidates import STAGES, cheap_filters, furthest, temperatures
from evolve.standins.models import SMOKE_MARKER, RoutedModel
from tests.unit.engine.expansion_place import AGENT as EXPAND_AGENT
from tests.unit.engine.expansion_place import expansion_place

MAIN = "import x\n\n\ndef main():\n    return x.VALUE\n"
DIFF = "--- a/agent/main.py\n+++ b/agent/main.py\n@@ -1 +1 @@\n-a\n+b\n"


def tree(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def test_temperatures_spread_evenly_from_the_lowest():
    assert temperatures(1, 0.2, 1.0) == (0.2,)
    assert temperatures(3, 0.2, 1.0) == (0.2, 0.6, 1.0)


@pytest.mark.parametrize(
    ("child", "diff", "stage", "kind"),
    [
        ({"agent/main.py": MAIN}, "", "applies", EditKind.NONE),
        ({"agent/main.py": MAIN + "def broken(:\n"}, DIFF, "compiles", EditKind.CODE),
        (
            {"agent/main.py": MAIN.replace("\n\n\n", "\n\n\n# a comment\n")},
            DIFF,
            "differs",
            EditKind.COSMETIC,
        ),
        (
            {"agent/main.py": MAIN + "\n\ndef solve_task(self):\n    return 'solved'\n"},
            DIFF,
            "differs",
            EditKind.COSMETIC,
        ),
        ({"agent/main.py": MAIN + 'PROMPT = "Think first."\n'}, DIFF, None, EditKind.PROMPT),
        ({"agent/main.py": MAIN.replace("x.VALUE", "x.VALUE + 1")}, DIFF, None, EditKind.CODE),
    ],
)
def test_each_cheap_filter(tmp_path, child, diff, stage, kind):
    parent = tree(tmp_path / "parent", {"agent/main.py": MAIN})
    filtered = cheap_filters(parent, tree(tmp_path / "child", child), diff)
    assert (filtered.stage, filtered.kind) == (stage, kind), filtered.reason


def test_require_code_refuses_prompt_text_and_a_lesson_but_not_code(tmp_path):
    parent = tree(tmp_path / "parent", {"agent/main.py": MAIN})
    for name, text, stage in (
        ("prompt", MAIN + 'PROMPT = "Think."\n', "code edit"),
        ("code", MAIN + "STEPS = 3\n", None),
    ):
        child = tree(tmp_path / name, {"agent/main.py": text})
        assert cheap_filters(parent, child, DIFF, require_code=True).stage == stage, name
    lesson_parent = tree(tmp_path / "lp", {"agent/main.py": MAIN + 'PROMPT = "a"\n'})
    lesson = tree(tmp_path / "lesson2", {"agent/main.py": MAIN + 'PROMPT = "a"\nPROMPT += "Lesson: b"\n'})
    refused = cheap_filters(lesson_parent, lesson, DIFF, require_code=True)
    assert (refused.stage, refused.kind) == ("code edit", EditKind.LESSON)


def test_the_furthest_candidate_is_the_one_that_passed_the_most_stages():
    assert furthest(["applies", "own tests", "compiles"]) == 1
    assert furthest(["differs", None]) == 1 and furthest(["solve", "solve"]) == 0
    assert STAGES[:5] == ("sandbox", "applies", "compiles", "differs", "code edit") and "own tests" in STAGES
    assert furthest(["sandbox", "applies"]) == 1  # a candidate whose sandbox failed got nowhere


# The expansion test's agent, its request carrying the candidate's temperature hint.
AGENT = EXPAND_AGENT.replace(
    "ask(open(given).read())",
    'ask(open(given).read() + " t=" + os.environ.get("EVOLVE_TEMPERATURE", "none") + ";")',
)
assert AGENT != EXPAND_AGENT
BREAK_TESTS = "echo 'def test_broken():\n    assert False' >> tests/test_agent.py"
MODELS = {
    "modify": RoutedModel(
        [
            ("t=0;", "true"),  # changes nothing
            ("t=0.25;", "echo 'def broken(:' >> agent/__main__.py"),  # does not compile
            ("t=0.5;", "echo '# only a comment' >> agent/__main__.py"),  # the same syntax tree
            ("prompt-case t=0.75;", "echo 'HINT = \"Think first.\"' >> agent/__main__.py"),  # prompt text
            ("tests-case t=0.75;", BREAK_TESTS),  # the gate's own-tests check refuses it
            ("t=0.75;", "echo 'STEPS = 3' >> agent/__main__.py"),  # a code edit
            ("t=1;", "echo 'STEPS = 4' >> agent/__main__.py"),
        ],
        "true",
    ),
    "solve": RoutedModel(
        [(SMOKE_MARKER, "echo 'def greet(name): return f\"Hello, {name}!\"' > greet.py")], "true"
    ),
}


@pytest.fixture(scope="module")
def expand(tmp_path_factory):
    """`expand(instructions, **settings)`: one expansion of the node with k = 5 candidates at 0 .. 1."""
    with expansion_place(tmp_path_factory.mktemp("candidates"), MODELS, AGENT) as (run, node, place):

        def one(instructions: str, **settings):
            job = run.start_job("expand", node.id)
            work = Expansion(
                instructions, ExpandSettings(**{"candidates": 5, "temperature": (0.0, 1.0), **settings})
            )
            result, _ = place.run_work(job, node, work)
            return result, run.log_dir(job.id), run

        yield one


def test_k_candidates_are_filtered_and_the_first_survivor_is_the_child(expand):
    result, log_dir, _ = expand("plain-case")
    assert result.valid, result.reason
    records = read_candidates(log_dir)
    assert [(c.number, c.temperature, c.stage, c.chosen) for c in records] == [
        (1, 0.0, "applies", False),
        (2, 0.25, "compiles", False),
        (3, 0.5, "differs", False),
        (4, 0.75, None, True),
    ]  # the fifth is never sampled: the fourth survived
    assert "empty diff" in records[0].reason and "does not compile" in records[1].reason
    assert records[3].kind == "code" and records[3].changed_lines == 1
    assert (result.code_dir / "agent" / "__main__.py").read_text().endswith("STEPS = 3\n")
    assert result.code_dir == log_dir / "child" and not list(log_dir.glob("candidate-*/candidate"))
    assert (log_dir / "candidate-2" / "child.patch").read_text().count("def broken(:") == 1  # its patch stays


def test_a_candidate_the_gate_refuses_is_recorded_with_the_gates_reason(expand):
    result, log_dir, _ = expand("tests-case")
    records = read_candidates(log_dir)
    assert records[3].stage == "own tests" and "the agent's own tests fail" in records[3].reason
    assert result.valid and records[4].chosen and records[4].temperature == 1.0


def test_require_code_refuses_a_prompt_edit_and_the_child_is_the_next_code_edit(expand):
    result, log_dir, _ = expand("prompt-case", require_code=True)
    records = read_candidates(log_dir)
    assert records[3].stage == "code edit" and "meta.require_code" in records[3].reason
    assert result.valid and records[4].chosen
    result, log_dir, _ = expand("prompt-case")  # without the switch the prompt edit is the child
    assert result.valid and read_candidates(log_dir)[-1].kind == "prompt"


def test_with_no_survivor_the_furthest_candidate_is_the_invalid_child_with_its_reason(expand):
    result, log_dir, _ = expand("tests-case", temperature=(0.0, 0.75), candidates=4)
    assert not result.valid and "the agent's own tests fail" in result.reason
    assert "the furthest of 4 candidates, candidate 4" in result.reason
    assert result.code_dir == log_dir / "child" and not any(c.chosen for c in read_candidates(log_dir))


def test_evolve_show_lists_each_candidate_with_its_verdict(expand):
    from evolve.archive.summary import render_node

    result, _, run = expand("plain-case")
    job = [j for j in run.jobs() if j.kind == "expand"][-1]
    node = run.add_node(result.code_dir, parent=job.node, origin="self_modify", job_id=job.id)
    assert [c.number for c in node_candidates(run, node.id)] == [1, 2, 3, 4]
    shown = render_node(run, node.id)
    assert (
        "candidates (4):" in shown and "refused at differs" in shown and "4. t=0.75  code, 1 lines" in shown
    )
    from evolve.report.data import collect

    panel = json.loads(collect(run).panel_json())[node.id]  # the report's panel: the same lines
    assert len(panel["candidates"]) == 4 and panel["candidates"][3].startswith("4. t=0.75  code, 1 lines")
    assert "refused at applies" in panel["candidates"][0] and panel["candidates"][3].endswith(": child")


def test_the_brief_shows_the_named_targets_source_and_the_map_and_nothing_without_a_target():
    from evolve.meta.brief import focused_brief
    from evolve.seed import seed_dir

    instructions = "Problem: p\n\nTarget: agent/tools.py:Workspace.bash\n\nChange to make: run python3.\n"
    brief = focused_brief(instructions, seed_dir())
    assert brief.startswith(instructions.rstrip())
    assert "--- agent/tools.py:Workspace.bash (the target, as it stands; lines " in brief
    shown = brief.split("the agent's map")[0]
    assert "\ndef bash(self, command: str" in shown and "def write(" not in shown  # dedented: it parses alone
    assert "agent/loop.py (" in brief.split("the agent's map")[1]  # the map lists every file
    loose = focused_brief("Make agent/loop.py:parse accept a bare fence.", seed_dir())
    assert "--- agent/loop.py:parse (the target" in loose  # an agent's own diagnosis, no Target line
    assert focused_brief("Solve solution.py better.", seed_dir()) == "Solve solution.py better."
    lines = (
        f"{instructions}\nThe lines that decide it (agent/tools.py, lines 32):\n"
        '        output = f"{done.stdout}{done.stderr}\\n[exit code {done.returncode}]".lstrip("\\n")\n'
    )
    shown = focused_brief(lines, seed_dir())  # the lines, and still the whole target they are part of
    assert (
        shown.startswith(lines.rstrip())
        and "(the target, as it stands" in shown
        and "agent/loop.py (" in shown
    )
