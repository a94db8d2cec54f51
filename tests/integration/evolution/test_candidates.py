"""`[meta] candidates` in a real evolution (Docker sandboxes, the gateway, the seed agent, the gate; scripted
models): three candidates per expansion, each recorded with its filter verdict, the child is the first that
passes every filter and the gate, and `require_code` turns a prompt-only candidate away."""

import pytest

from evolve.archive.candidates import node_candidates
from evolve.archive.edits import EditKind, code_edit_rate, edit_kind
from evolve.archive.summary import render_node
from evolve.launch import run_evolution
from evolve.standins.models import ScriptedModel
from tests.integration.scripted import ONE_EXPANSION, TWO_TASKS, evolution_config, scripted_models

NOTHING = "Nothing to change.\n```done\n```"
PROMPT_ONLY = (
    'A clearer format line.\n```python agent/prompts.py\nFORMAT = "Reply with one fenced block."\n```'
)
CODE = (
    "A longer shell timeout.\n```python agent/tools.py\ndef __init__(self, root: Path, timeout: float = "
    "90.0) -> None:\n"
    "    self.root, self.timeout, self.edits = root, timeout, 0\n"
    '    self.asked_for_lines, self.target = False, ""\n```'
)


def _evolve(tmp_path, name: str, require_code: bool):
    config = evolution_config(
        tmp_path,
        name,
        5,
        tasks=TWO_TASKS,
        budget=ONE_EXPANSION,
        meta={"candidates": 3, "temperature": [0.2, 1.0], "require_code": require_code},
    )
    run, outcome = run_evolution(
        config, models=scripted_models(modify=ScriptedModel([NOTHING, PROMPT_ONLY, CODE]))
    )
    children = [n for n in run.nodes() if n.parent is not None]
    assert len(children) == 1, outcome
    return run, children[0]


@pytest.mark.docker
def test_require_code_refuses_the_prompt_only_candidate_and_the_code_edit_is_the_child(tmp_path, base_image):
    run, child = _evolve(tmp_path, "require-code", require_code=True)
    candidates = node_candidates(run, child.id)
    assert [(c.temperature, c.stage, c.chosen) for c in candidates] == [
        (0.2, "applies", False),
        (0.6, "code edit", False),
        (1.0, None, True),
    ], render_node(run, child.id)
    assert "meta.require_code" in candidates[1].reason and candidates[1].kind == "prompt"
    assert child.valid and edit_kind(run, child.id) == EditKind.CODE
    assert "    def __init__(self, root: Path, timeout: float = 90.0) -> None:" in run.diff(child.id)
    assert str(code_edit_rate(run)) == "1/1 (1.00)"
    shown = render_node(run, child.id)
    assert "candidates (3):" in shown and "refused at applies: empty diff" in shown and ": child" in shown


@pytest.mark.docker
def test_without_the_switch_the_first_survivor_is_the_prompt_edit(tmp_path, base_image):
    run, child = _evolve(tmp_path, "first-survivor", require_code=False)
    assert [(c.stage, c.chosen) for c in node_candidates(run, child.id)] == [("applies", False), (None, True)]
    assert child.valid and edit_kind(run, child.id) == EditKind.PROMPT
    assert str(code_edit_rate(run)) == "0/1 (0.00)"


DEEP = "A table of weights.\n```python agent/deep.py\nWEIGHT = " + "1 + " * 900 + "1\n```"
"""Code that parses but is too deep for `ast.unparse` (a RecursionError on the host's edit-kind reading)."""


@pytest.mark.docker
def test_a_childs_code_too_deep_for_the_hosts_readers_is_an_ordinary_code_edit(tmp_path, base_image):
    """Attack: agent code the host reads (edit kind, map, status) nested past Python's recursion limit. The
    expansion completes, the child is a valid code edit, and status and show read it."""
    config = evolution_config(
        tmp_path, "too-deep", 5, tasks=TWO_TASKS, budget=ONE_EXPANSION, meta={"candidates": 1}
    )
    run, outcome = run_evolution(config, models=scripted_models(modify=ScriptedModel([DEEP])))
    children = [n for n in run.nodes() if n.parent is not None]
    assert len(children) == 1, [(j.kind, j.state, j.detail) for j in run.jobs() if j.kind == "expand"]
    child = children[0]
    assert child.valid and edit_kind(run, child.id) == EditKind.CODE, (outcome, child.reason)
    assert "WEIGHT = 1 + 1 + " in run.diff(child.id)
    assert str(code_edit_rate(run)) == "1/1 (1.00)" and "candidates" not in render_node(run, child.id)
    assert not [j for j in run.jobs() if j.state == "failed"]


ASK_AGAIN = (
    "A firmer task prompt.\n```python agent/prompts.py\n"
    'SOLVE = "Task:\\n{problem}\\n\\n{files}\\n\\nMake the change now, in one fenced block."\n```'
)
"""An edit that changes what the agent asks the model on every task."""


@pytest.mark.docker
def test_a_candidate_that_acts_as_its_parent_where_it_failed_is_refused_before_the_gate(tmp_path, base_image):
    """The wide lineage's node 11: a code edit that changes nothing the agent does (there, `check_command`
    reshuffled; here, a longer shell timeout on a task the model gives up at once). Re-run on the parent's
    failed task against the parent's recorded replies, it sends the very same request and fails again: it is
    refused at `behaviour`, before the gate; the next candidate asks the model something new and is the
    child."""
    config = evolution_config(
        tmp_path,
        "behaviour",
        5,
        tasks=TWO_TASKS,
        budget=ONE_EXPANSION,
        meta={"candidates": 2, "replays": 1},
        executor={"concurrency": 1},
    )
    run, _ = run_evolution(config, models=scripted_models(modify=ScriptedModel([CODE, ASK_AGAIN])))
    (child,) = [n for n in run.nodes() if n.parent is not None]
    candidates = node_candidates(run, child.id)
    assert [(c.kind, c.stage, c.chosen) for c in candidates] == [
        ("code", "behaviour", False),
        ("prompt", None, True),
    ], render_node(run, child.id)
    (failed,) = [e.task for e in run.evaluations(split="dev") if e.node != child.id and e.outcome == "fail"]
    assert (
        f"it acts as its parent: on 1 of the parent's failed tasks ({failed}) it sent the model the parent's "
        "very requests, all of them, left the same change and failed again"
    ) == candidates[0].reason
    assert child.valid and "Make the change now, in one fenced block." in run.diff(child.id)
    (expansion,) = [j for j in run.jobs() if j.kind == "expand"]
    assert '"outcome": "fail"' in (run.log_dir(expansion.id) / "replay-1" / "outcome.json").read_text()


CRASH = (
    "The workspace checks its root.\n```python agent/tools.py\ndef __init__(self, root: Path, timeout: float "
    "= 60.0) "
    '-> None:\n    if "smoke" not in str(root):\n        raise RuntimeError("a path the smoke task never '
    'takes")\n'
    "    self.root, self.timeout, self.edits = root, timeout, 0\n"
    '    self.asked_for_lines, self.target = False, ""\n```'
)
"""An edit that crashes the agent on every real task and not on the gate's smoke task (the file-hidden run's
two children: a path joined as a string, reached only where a task's docstring has examples)."""


@pytest.mark.docker
def test_a_candidate_that_crashes_where_its_parent_ran_is_refused_before_the_gate(tmp_path, base_image):
    """Replayed on the parent's failed task, the candidate's agent exits with an error where the parent's ran
    to its end: refused at `behaviour` at once; the honest next candidate is the child."""
    config = evolution_config(
        tmp_path,
        "crash",
        5,
        tasks=TWO_TASKS,
        budget=ONE_EXPANSION,
        meta={"candidates": 2, "replays": 1},
        executor={"concurrency": 1},
    )
    run, _ = run_evolution(config, models=scripted_models(modify=ScriptedModel([CRASH, ASK_AGAIN])))
    (child,) = [n for n in run.nodes() if n.parent is not None]
    candidates = node_candidates(run, child.id)
    assert [(c.stage, c.chosen) for c in candidates] == [("behaviour", False), (None, True)], render_node(
        run, child.id
    )
    (failed,) = [e.task for e in run.evaluations(split="dev") if e.node != child.id and e.outcome == "fail"]
    assert candidates[0].reason == (
        f"it breaks where its parent ran: on {failed}, one of the parent's failed tasks "
        "replayed, its agent ended in error (RuntimeError: a path the smoke task never takes)"
    )
    assert child.valid and "Make the change now, in one fenced block." in run.diff(child.id)
