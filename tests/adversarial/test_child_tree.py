"""The gate checks exactly what the archive commits: one expansion each, through the real runner, worker,
Docker sandboxes, gateway and git archive, where the child's `improve` step runs a script (the executor
agent runs its model's reply). The host computes the change from the copied-out tree against the parent's
recorded tree; nothing in the sandbox's git, and no ignore or attribute file of the child's, decides what
is checked or committed."""

from __future__ import annotations

import pytest

from evolve.archive.codetree import tree_entries, tree_id
from evolve.archive.store import Run
from evolve.config import BudgetConfig
from evolve.engine.executors import LocalExecutor
from evolve.engine.expand import ExpandSettings
from evolve.engine.runner import Runner
from evolve.engine.worker import EngineWorker, WorkerSettings
from evolve.llm.gateway import Gateway
from evolve.meta.modify import NO_CHANGE
from evolve.sandbox.factory import DockerSandboxes
from evolve.sandbox.types import SandboxLimits
from evolve.search import Expand, Stop
from evolve.standins.models import SMOKE_MARKER, RoutedModel
from tests.integration.scripted import diagnosis

from .conftest import executor_agent
from .test_gate import SMOKE_EDIT

NOTE = "echo 'NOTE = 1' >> agent/__main__.py"
"""An honest edit of the child's own code (a code edit: the cheap filters refuse a comment alone)."""


class ExpandTheSeedOnce:
    """A policy that grows the seed by one child, then stops."""

    name = "expand-once"

    def next_action(self, view, rng):
        return (
            Expand(view.ids[0]) if len(view.ids) == 1 and not view.pending_expansions else Stop("one child")
        )

    def best(self, view):
        return None


@pytest.fixture
def expand(tmp_path, base_image):
    """expand(script) -> (run, child node, the child's code as the gate checked it): the seed's `improve`
    runs `script` in its copy of itself, and the runner records the child."""
    runs = []

    def go(script: str, *, copy_limit_bytes: int = 64 * 1024 * 1024):
        run = Run.create(tmp_path / f"run-{len(runs)}")
        runs.append(run)
        seed = run.add_node(executor_agent(tmp_path / f"seed-{len(runs)}"), origin="seed")
        models = {
            "diagnose": RoutedModel([], diagnosis(("agent/__main__.py",))),
            "modify": RoutedModel([], script),
            "solve": RoutedModel([(SMOKE_MARKER, SMOKE_EDIT)], "true\n"),
        }
        limits = SandboxLimits(wall_clock_s=120.0, memory="512m", copy_limit_bytes=copy_limit_bytes)
        executor = LocalExecutor(1)
        try:
            with Gateway(models, exchanges_dir=run.path / "exchanges", usage_sink=run) as gateway:
                worker = EngineWorker(
                    run,
                    {},
                    gateway=gateway,
                    settings=WorkerSettings(expand=ExpandSettings()),
                    seed=0,
                    sandboxes=DockerSandboxes(run.id, limits),
                )
                Runner(
                    run,
                    ExpandTheSeedOnce(),
                    worker,
                    executor,
                    search_tasks=["t"],
                    budget=BudgetConfig(evaluations=1),
                    concurrency=1,
                    seed=0,
                ).execute()
        finally:
            executor.shutdown(cancel_pending=True)
        (child,) = [node for node in run.nodes() if node.parent == seed.id]
        (job,) = [job for job in run.jobs() if job.kind == "expand"]
        return run, child, run.log_dir(job.id) / "child"

    yield go
    for run in runs:
        run.close()


def committed(run, node):
    return run.code.entries(node.commit)


def test_twin_an_honest_edit_is_valid_and_committed_as_checked(expand):
    run, child, checked = expand(NOTE)
    assert child.valid, child.reason
    assert committed(run, child) == tree_entries(checked)
    assert committed(run, child)[b"agent/__main__.py"][1].endswith(b"NOTE = 1\n")


def test_a_moved_baseline_tag_is_no_change(expand):
    """Attack (4): the sandbox's own git said the child changed a file; its tree is its parent's."""
    script = (
        "git rm -q tests/test_agent.py && git -c user.name=a -c user.email=a@a commit -qm gone && git tag -f "
        "evolve-baseline >/dev/null && "
        "git checkout -q HEAD~1 -- tests/test_agent.py"
    )
    run, child, _ = expand(script)
    assert (child.valid, child.reason) == (False, NO_CHANGE)
    assert run.code.tree_hash(child.commit) == run.code.tree_hash(run.node(child.parent).commit)


def test_a_childs_gitignore_does_not_choose_what_is_committed(expand):
    """Attack (5): `add_node` used to commit only what the child's `.gitignore` let through."""
    run, child, checked = expand(f"{NOTE} && printf '*\\n!.gitignore\\n' > .gitignore")
    assert child.valid, child.reason
    files = committed(run, child)
    assert files == tree_entries(checked) and b"agent/__main__.py" in files and b".gitignore" in files
    assert run.code.tree_hash(child.commit) == tree_id(tree_entries(checked))


def test_a_childs_gitattributes_do_not_change_what_a_checkout_holds(expand, tmp_path):
    run, child, checked = expand(f"{NOTE} && printf '* text eol=crlf\\n' > .gitattributes")
    assert child.valid, child.reason
    out = run.checkout(child.id, tmp_path / "out")
    assert (
        tree_entries(out) == tree_entries(checked)
        and b"\r\n" not in (out / "agent" / "__main__.py").read_bytes()
    )


def test_code_the_archive_would_not_store_is_not_checked_either(expand):
    """A sourceless `agent/__main__.pyc` runs in the sandbox, but `*.pyc` is never part of a tree: the gate
    sees the tree without it, as the archive stores it, and the child no longer starts."""
    script = (
        "python3 -c \"import py_compile; py_compile.compile('agent/__main__.py', "
        "cfile='agent/__main__.pyc')\" "
        "&& rm agent/__main__.py"
    )
    run, child, _ = expand(script)
    assert not child.valid and child.reason.startswith("the agent no longer imports"), child.reason
    assert b"agent/__main__.pyc" not in committed(run, child)


def test_a_repository_inside_the_child_is_committed_as_its_files(expand):
    """`git add` would have committed `agent/` as a gitlink (or failed) where the child made it a
    repository."""
    run, child, checked = expand(f"{NOTE} && git init -q agent")
    assert child.valid, child.reason
    files = committed(run, child)
    assert files == tree_entries(checked) and b"agent/__main__.py" in files
    assert not any(rel.startswith(b"agent/.git") for rel in files)


def test_a_path_git_cannot_check_out_makes_the_child_invalid_not_the_run_fail(expand):
    _, child, _ = expand(f"{NOTE} && mkdir .GIT && echo x > .GIT/config")
    assert (child.valid, child.reason) == (
        False,
        "the child's tree holds a path git cannot check out: '.GIT/config'",
    )


def test_a_link_out_of_the_tree_is_refused_and_a_link_inside_it_is_kept(expand):
    run, child, _ = expand(f"{NOTE} && ln -s /etc/passwd agent/passwd")
    assert not child.valid and child.reason.startswith("the child's code cannot be copied out"), child.reason
    run, child, _ = expand(f"{NOTE} && ln -s __main__.py agent/alias.py")
    assert child.valid, child.reason
    assert committed(run, child)[b"agent/alias.py"] == ("120000", b"__main__.py")


def test_odd_names_and_modes_are_committed_exactly(expand):
    run, child, checked = expand(
        f"{NOTE} && printf 'x' > 'agent/new\nline.txt' && chmod +x agent/__main__.py"
    )
    assert child.valid, child.reason
    files = committed(run, child)
    assert files == tree_entries(checked)
    assert files[b"agent/new\nline.txt"] == ("100644", b"x") and files[b"agent/__main__.py"][0] == "100755"


def test_an_empty_directory_alone_is_no_change(expand):
    _, child, _ = expand("mkdir -p agent/empty")
    assert (child.valid, child.reason) == (False, NO_CHANGE)


def test_a_child_over_the_copy_cap_is_invalid(expand):
    _, child, _ = expand(f"{NOTE} && head -c 3000000 /dev/urandom > big.bin", copy_limit_bytes=2_000_000)
    assert not child.valid and child.reason.startswith("the child's code cannot be copied out"), child.reason
