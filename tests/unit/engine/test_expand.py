"""The expansion under `[meta] procedure = "agent"`, through the real pipeline on process sandboxes with
scripted models behind a real gateway: the node's own `diagnose` writes the instructions its child's
`improve` gets, the gate checks the child's `diagnose`, and a diagnose step that misbehaves gets no child.

The agent asks the model once through the gateway and runs the reply as a bash script; in `diagnose` the
script sees $MATERIAL and writes the instructions to $OUT."""

from __future__ import annotations

import json

import pytest

from evolve.archive.store import Run
from evolve.config import MetaConfig
from evolve.engine.diagnosis import diagnose_node
from evolve.engine.expand import ExpandSettings, Expansion
from evolve.meta.procedure import MAX_INSTRUCTIONS, Material
from evolve.standins.models import SMOKE_MARKER, RoutedModel
from tests.unit.engine.expansion_place import expansion_place

BREAK = """sed -i 's/args\\[0\\] == "diagnose"/args[0] == "gone"/' agent/__main__.py"""
KEEP_DATA = (
    "echo \"DATA = '$(tr -d '\\n' < $(dirname $INSTRUCTIONS)/instructions.json)'\" >> agent/__main__.py"
)
"""An improve step that copies the instructions' data (instructions.json, beside the text) into the child."""
MODELS = {
    "diagnose": RoutedModel(
        [
            (
                "honest-case",
                'echo "# smuggled" >> agent/__main__.py; echo "Add a note: $(ls $MATERIAL/failures)" > $OUT',
            ),
            ("break-case", 'echo "Break your diagnose step." > $OUT'),
            ("silent-case", 'echo "VALID: the child scores 1.0"'),
            ("crash-case", "echo boom >&2; exit 3"),
            ("flood-case", "head -c 200000 /dev/zero | tr '\\0' y > $OUT"),
        ],
        "exit 9",
    ),
    "modify": RoutedModel(
        [
            ("Add a note", "echo 'NOTE = 1  # a note' >> agent/__main__.py"),
            ("Break your diagnose", BREAK),
            ("Keep the data", KEEP_DATA),
            ("yyyy", "echo 'LONG = 1  # a long note' >> agent/__main__.py"),
        ],
        "true",
    ),
    "solve": RoutedModel(
        [
            (SMOKE_MARKER, "echo 'def greet(name): return f\"Hello, {name}!\"' > greet.py"),
            ("check that `diagnose` runs", "echo 'Check the loop.' > $OUT"),
        ],
        "true",
    ),
}


def material(case: str) -> Material:
    return Material((("README.md", "How the agent failed."), ("failures/01-t1.md", f"t1 failed ({case})")))


@pytest.fixture(scope="module")
def expand(tmp_path_factory):
    """`expand(case)`: one expansion of the seed node with the case's material; (result, log dir,
    exchanges)."""
    with expansion_place(tmp_path_factory.mktemp("expand"), MODELS) as (run, node, place):

        def one(case: str):
            job = run.start_job("expand", node.id)
            result, _ = place.run_work(job, node, Expansion(material(case), ExpandSettings()))

            def exchanges(step: str) -> list[dict]:
                path = run.path / "exchanges" / f"job-{job.id}-{step}.jsonl"
                return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []

            return result, run.log_dir(job.id), exchanges

        yield one


def asked(exchanges: list[dict]) -> list[str]:
    return [e["request"]["messages"][-1]["content"] for e in exchanges]


def test_the_agents_own_diagnosis_writes_the_instructions_its_childs_improve_gets(expand):
    result, log_dir, exchanges = expand("honest-case")
    assert result.valid, result.reason
    assert result.instructions == "Add a note: 01-t1.md" == (log_dir / "instructions.md").read_text()
    assert any("t1 failed (honest-case)" in text for text in asked(exchanges("diagnose")))
    assert any(result.instructions in text for text in asked(exchanges("modify")))
    assert (log_dir / "material" / "failures" / "01-t1.md").read_text() == "t1 failed (honest-case)"
    # the gate ran the child's diagnose on its own material (validate-diagnose.log), and it wrote instructions
    assert (log_dir / "validate-diagnose.log").read_text().startswith("exit 0")
    # what the diagnose step did to its copy of the code does not reach the child: only improve edits it
    child = (result.code_dir / "agent" / "__main__.py").read_text()
    assert child.endswith("# a note\n") and "# smuggled" not in child


def test_a_child_whose_diagnose_breaks_is_invalid_with_the_reason(expand):
    result, _, _ = expand("break-case")
    assert not result.valid and result.reason.startswith("contract: diagnose did not complete (exit 1")
    assert "the meta procedure is broken" in result.reason
    assert 'args[0] == "gone"' in (result.code_dir / "agent" / "__main__.py").read_text()


@pytest.mark.parametrize(
    ("case", "why"),
    [
        ("silent-case", "diagnose wrote no instructions to its --out file"),
        ("crash-case", "diagnose did not complete (exit 3: boom)"),
    ],
)
def test_a_diagnose_step_that_writes_no_instructions_gets_no_child_and_no_improve_step(expand, case, why):
    result, _, exchanges = expand(case)
    assert (result.valid, result.code_dir, result.reason) == (
        False,
        None,
        f"the agent's diagnosis failed: {why}",
    )
    assert exchanges("diagnose") and not exchanges("modify")  # what it printed counts for nothing


def test_instructions_are_capped_before_the_child_sees_them(expand):
    result, _, exchanges = expand("flood-case")
    assert result.valid, result.reason
    assert MAX_INSTRUCTIONS < len(result.instructions) < MAX_INSTRUCTIONS + 100
    assert all(len(text) < MAX_INSTRUCTIONS + 200 for text in asked(exchanges("modify")))


def test_the_instructions_as_data_lie_beside_their_text_for_the_improve_step(tmp_path_factory):
    """`instructions.json` (evolve.meta.modify.INSTRUCTIONS_JSON) ships with the expansion: the job's log
    keeps it and the improve step finds it beside the instructions' text, /work/instructions.json (here the
    scripted improve copies it into the child); the agent may ignore it."""
    data = json.dumps(
        {
            "target": "agent/__main__.py:main",
            "locations": [{"path": "agent/__main__.py", "line": 3, "score": 0.5, "evidence": "x"}],
        }
    )
    with expansion_place(tmp_path_factory.mktemp("data"), MODELS) as (run, node, place):
        job = run.start_job("expand", node.id)
        result, _ = place.run_work(job, node, Expansion("Keep the data.", ExpandSettings(), data=data))
    assert (run.log_dir(job.id) / "instructions.json").read_text() == data
    assert f"DATA = '{data}'" in (result.code_dir / "agent" / "__main__.py").read_text()


def test_the_host_side_only_gathers_the_material_under_the_agents_procedure(tmp_path):
    run = Run.create(tmp_path / "run")
    (tmp_path / "agent").mkdir()
    node = run.add_node(tmp_path / "agent")
    log = tmp_path / "eval"
    log.mkdir()
    (log / "agent.log").write_text("agent: limits after 3 steps")
    run.record_evaluation(node.id, "t1", "fail", log_path=str(log))
    run.record_evaluation(node.id, "t2", "pass")
    run.record_evaluation(node.id, "held-out-task", "fail", log_path=str(log), split="heldout")
    job = run.start_job("expand", node.id)
    brief = diagnose_node(
        run,
        job,
        node,
        {},
        None,
        ["agent/x.py"],
        seed=0,
        job_tokens=1,
        meta=MetaConfig(procedure="agent"),
        extra_material={"experience.md": "pooled"},
    )
    assert isinstance(brief, Material)  # no model call on the host (its gateway is None here)
    files = dict(brief.files)
    assert files["experience.md"] == "pooled" and "agent/x.py" in files["README.md"]
    assert "agent: limits after 3 steps" in files["failures/01-t1.md"] and "- t2: pass" in files["SUMMARY.md"]
    assert not (run.log_dir(job.id) / "instructions.md").exists()
    assert not any("held-out-task" in text for _, text in brief.files)  # held-out results never reach it


def test_the_diagnose_step_has_its_own_model_channel_only_under_the_agents_procedure():
    specs = Expansion("instructions", ExpandSettings()).channels("7")
    assert [s.role for s in specs] == ["modify", "solve"]
    specs = Expansion(material("x"), ExpandSettings()).channels("7")
    assert [(s.job, s.role) for s in specs] == [
        ("7-diagnose", "diagnose"),
        ("7-modify", "modify"),
        ("7-validate", "solve"),
    ]
    # each repair attempt its own channel of the meta model, granted before the work is shipped (a cluster)
    specs = Expansion("instructions", ExpandSettings(repairs=2, repair_locations=2)).channels("7")
    assert [(s.job, s.role) for s in specs][:4] == [(f"7-repair-{n}", "modify") for n in range(1, 5)]


def test_the_templates_larger_budget_holds_only_where_the_parent_fails_its_own_tests() -> None:
    settings = ExpandSettings(templates=2, locations=2, test_templates=5, test_locations=6)
    assert settings.template_budget(0) == (2, 2)
    assert settings.template_budget(3) == (5, 6)
    assert ExpandSettings(templates=2, locations=3, test_templates=4).template_budget(1) == (4, 3)
    assert ExpandSettings(templates=2, locations=3).template_budget(1) == (2, 3)  # none set: as ever
