"""The validation gate: a child becomes a valid node only if it still works as an agent.

Checks, in order: a change (the host's diff of the child's tree against its parent's, never git state
from the sandbox) and a tree that git can check out, both on the host; then, each in the same fresh
sandbox: the agent still imports; its own tests pass (the child may rewrite those); then the engine's contract
checks, which it cannot edit: `python -m agent solve` on a smoke task exits 0, made at least one model request
through the gateway (the gateway's count, `served`) and really changed the smoke repo: some file other than
its test written or changed (copied out and compared by the engine), in one of `SMOKE_ATTEMPTS` solves of
`SMOKE_STEPS` steps, each in a fresh copy of the repo. Neither passing the smoke check nor the right file is
required: a weak model often fails it or writes to a wrong path, and a stricter rule would stop no attack that
this one lets through (a hollow child could write junk into any file); `python -m agent improve` starts, asks
the model (the gateway's count: a stub that exits 0 would leave a child whose descendants never change) and
exits 0 on a trivial instruction with one step; under `[meta] procedure = "agent"` also `python -m agent
diagnose` exits 0 and writes non-empty instructions for a small failure material (the smoke task failed).
`check_agent` is the gate without the diff check: `evolve agent check DIR` runs it on any directory that
claims to meet the agent contract.
"""

from __future__ import annotations

import os
import tarfile
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from evolve.archive.codetree import git_refuses, tree_entries
from evolve.meta.diagnose import DiagnosisFailed
from evolve.meta.modify import NO_CHANGE
from evolve.meta.procedure import AGENT, Material, agent_diagnose, output_tail
from evolve.sandbox.types import ExecResult, Sandbox

SMOKE_REPO, SMOKE_PROBLEM = "/work/smoke", "/work/smoke-problem.md"
SMOKE_FILES = {
    # A stub that returns, not `raise NotImplementedError`: a small model reads that line as the spec and
    # writes it back unchanged (an honest child refused for "no real change").
    "greet.py": (
        'def greet(name):\n    """Return a greeting for `name`: greet(\'Ada\') == \'Hello, Ada!\'."""\n'
        '    return ""\n'
    ),
    "test_greet.py": (
        "from greet import greet\n\n\ndef test_greet():\n    assert greet('Ada') == 'Hello, Ada!'\n"
    ),
}
SMOKE_STATEMENT = (
    "Implement `greet(name)` in greet.py so that it returns 'Hello, NAME!' (e.g. 'Hello, Ada!').\n"
)
SMOKE_FIX = 'sed -i \'s/return ""/return "Hello, " + name + "!"/\' greet.py'
"""The smoke task solved in one shell command (what the scripted stand-in models send)."""
SMOKE_STEPS = 3
"""Step cap of the smoke solve: room to look, write and check."""
SMOKE_ATTEMPTS = 2
"""Smoke solves, each in a fresh copy of the smoke repo, until one makes a real change. One sample of a
weak model is a coin toss (the same child may make no change in one solve and the fix in the next), and a
hollow child makes no change however often it is asked, so a second try admits no attack."""
SMOKE_TEST = "test_greet.py"
"""Editing only this file is no real change."""
_CACHES = {"__pycache__", ".pytest_cache"}
OWN_TESTS = ("python3", "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider")
"""How the gate runs an agent's own tests (in its root, the tests named after it), stopping at the first
failure."""
GATE_SELF, GATE_INSTRUCTIONS = "/work/gate-self", "/work/gate-instructions.md"
GATE_INSTRUCTION = "This is a check that `improve` runs: change nothing and finish.\n"
# The improve check asks for a short context: an agent that honours it (the seed does) shows the model
# a few of its files, not all of them, so the check costs one short model call instead of re-reading
# the whole agent (about 90 s on the embedded CPU model, which cannot reuse the improve step's prefix).
GATE_CONTEXT = {"EVOLVE_CONTEXT_CHARS": "8000"}
GATE_MATERIAL = Material(
    (
        (
            "README.md",
            "This is a check that `diagnose` runs: write short instructions for `improve` to --out.\n",
        ),
        ("SUMMARY.md", "# Evaluations\n\n- greet: fail\n"),
        (
            "failures/01-greet.md",
            "# greet: fail (changed no file)\n\n## The task statement\nWrite `greet(name)`.\n",
        ),
    )
)


@dataclass(frozen=True)
class Verdict:
    valid: bool
    reason: str | None = None
    check: str | None = None
    """The check of CHECKS that failed (None: passed, or refused before the checks)."""


def validate_child(
    sandbox: Sandbox,
    code_dir: Path,
    diff: str,
    log_dir: Path,
    *,
    channel_env: Mapping[str, str],
    served: Callable[[], int],
    smoke_steps: int = SMOKE_STEPS,
    timeout_s: float = 600.0,
    diagnose: bool = False,
) -> Verdict:
    """Run the gate on `code_dir`, exactly the tree the archive commits, with `diff` its change against the
    parent's tree; the first failing check is the reason. `served()`: model requests the gateway has
    answered for this job so far (e.g. `lambda: gateway.report(job).requests`). `diagnose`: the agent's
    meta procedure is in use (`[meta] procedure = "agent"`), so its diagnose command is checked too."""
    if not diff.strip():
        return Verdict(False, NO_CHANGE)
    refused = sorted(
        os.fsdecode(rel) for rel, (mode, _) in tree_entries(code_dir).items() if git_refuses(rel, mode)
    )
    if refused:
        return Verdict(False, f"the child's tree holds a path git cannot check out: {refused[0]!r}")
    return check_agent(
        sandbox,
        code_dir,
        log_dir,
        channel_env=channel_env,
        served=served,
        smoke_steps=smoke_steps,
        timeout_s=timeout_s,
        diagnose=diagnose,
    )


CHECKS = ("imports", "own tests", "solve", "model request", "smoke change", "improve", "diagnose")
"""The gate's checks after the diff, in order; each needs the ones before it to pass. `diagnose` only
under `[meta] procedure = "agent"`."""


def check_agent(
    sandbox: Sandbox,
    code_dir: Path,
    log_dir: Path,
    *,
    channel_env: Mapping[str, str],
    served: Callable[[], int],
    smoke_steps: int = SMOKE_STEPS,
    timeout_s: float = 600.0,
    diagnose: bool = False,
    on_check: Callable[[str, str | None], None] = lambda name, reason: None,
) -> Verdict:
    """Whether `code_dir` meets the agent contract: the gate without its diff check (`evolve agent check`
    runs it on any directory). `on_check(name, reason)` hears each check of CHECKS as it ends (reason
    None: passed) until the first that fails; `diagnose` as for `validate_child`."""
    tested = own_tests(sandbox, code_dir, log_dir, timeout_s=timeout_s, on_check=on_check)
    if not tested.valid:
        return tested
    verdict = _contract(sandbox, code_dir, log_dir, channel_env, served, smoke_steps, timeout_s, on_check)
    if not verdict.valid or not diagnose:
        return verdict
    try:  # the agent's code is still at AGENT: the checks above ran it from there
        agent_diagnose(
            sandbox,
            GATE_MATERIAL,
            log_dir,
            channel_env=channel_env,
            timeout_s=timeout_s,
            log_name="validate-diagnose",
        )
    except DiagnosisFailed as exc:
        return _failed(on_check, "diagnose", f"contract: {exc} (the meta procedure is broken)")
    on_check("diagnose", None)
    return verdict


def own_tests(
    sandbox: Sandbox,
    code_dir: Path,
    log_dir: Path,
    *,
    timeout_s: float = 600.0,
    on_check: Callable[[str, str | None], None] = lambda name, reason: None,
) -> Verdict:
    """The gate's first checks, which need no model: the agent at `code_dir` imports and its own tests pass
    (its code is left at AGENT in `sandbox`). Also run alone on a candidate before the dearer stages
    (evolve.engine.generate)."""
    sandbox.put_dir(code_dir, AGENT)
    imports = sandbox.exec(["python3", "-c", "import agent, agent.__main__"], cwd=AGENT, timeout=60)
    if not imports.ok:
        return _failed(on_check, "imports", f"the agent no longer imports: {output_tail(imports.stderr)}")
    on_check("imports", None)
    tests = sandbox.exec(
        [*OWN_TESTS, "tests"],
        cwd=AGENT,
        timeout=timeout_s,
    )
    (log_dir / "validate-tests.log").write_text(tests.stdout + tests.stderr)
    if not tests.ok:
        why = "timed out" if tests.timed_out else output_tail(tests.stdout + tests.stderr)
        return _failed(on_check, "own tests", f"the agent's own tests fail: {why}")
    on_check("own tests", None)
    return Verdict(True)


def _failed(on_check: Callable[[str, str | None], None], name: str, reason: str) -> Verdict:
    on_check(name, reason)
    return Verdict(False, reason, name)


def _smoke_changes(sandbox: Sandbox, repo: str, log: Path) -> list[str]:
    """Files of the smoke repo, other than its test and caches, that solve wrote or changed."""
    with tempfile.TemporaryDirectory(prefix="evolve-smoke-") as tmp:
        copy = Path(tmp) / "smoke"
        try:
            sandbox.get_dir(repo, copy)
        # a link out of the repo, a special file, over the copy cap
        except (OSError, tarfile.TarError) as exc:
            with log.open("a") as out:
                out.write(f"\nthe smoke repo could not be copied out: {exc}\n")
            return []
        changed = []
        for path in sorted(p for p in copy.rglob("*") if p.is_file() and not p.is_symlink()):
            relative = path.relative_to(copy)
            if relative.as_posix() == SMOKE_TEST or _CACHES & set(relative.parts):
                continue
            if SMOKE_FILES.get(relative.as_posix()) != path.read_text(errors="replace"):
                changed.append(relative.as_posix())
        return changed


def _smoke(
    sandbox: Sandbox, log_dir: Path, env: Mapping[str, str], smoke_steps: int, timeout_s: float, attempt: int
) -> tuple[ExecResult, list[str]]:
    """One smoke solve in a fresh copy of the smoke repo: its result and the files it really changed.
    Its output and the agent's transcript go to the log (for people; no check reads the transcript)."""
    suffix = "" if attempt == 1 else f"-{attempt}"
    repo, transcript = SMOKE_REPO + suffix, f"/work/smoke-transcript{suffix}.jsonl"
    log = log_dir / f"validate-smoke{suffix}.log"
    for name, text in SMOKE_FILES.items():
        sandbox.write_file(f"{repo}/{name}", text)
    smoke = sandbox.exec(
        [
            "python3",
            "-m",
            "agent",
            "solve",
            "--workdir",
            repo,
            "--problem",
            SMOKE_PROBLEM,
            "--budget-steps",
            str(smoke_steps),
        ],
        cwd=AGENT,
        env={**env, "EVOLVE_TRANSCRIPT": transcript},
        timeout=timeout_s,
    )
    log.write_text(f"exit {smoke.returncode}\n{smoke.stdout}\n{smoke.stderr}")
    try:
        (log_dir / f"validate-smoke-transcript{suffix}.jsonl").write_bytes(sandbox.read_file(transcript))
    except (FileNotFoundError, IsADirectoryError):
        pass  # the agent wrote none; the log says what happened
    return smoke, _smoke_changes(sandbox, repo, log) if smoke.ok else []


def _contract(
    sandbox: Sandbox,
    code_dir: Path,
    log_dir: Path,
    channel_env: Mapping[str, str],
    served: Callable[[], int],
    smoke_steps: int,
    timeout_s: float,
    on_check: Callable[[str, str | None], None],
) -> Verdict:
    """The engine's own checks of the agent contract (docs/design.md §The agent contract), whatever the
    child's tests say."""
    sandbox.write_file(SMOKE_PROBLEM, SMOKE_STATEMENT)
    env = {**channel_env, "PYTHONDONTWRITEBYTECODE": "1"}
    before = served()
    smoke, changed = _smoke(sandbox, log_dir, env, smoke_steps, timeout_s, attempt=1)
    if not smoke.ok:
        why = (
            "timed out"
            if smoke.timed_out
            else f"exit {smoke.returncode}: {output_tail(smoke.stdout + smoke.stderr)}"
        )
        return _failed(on_check, "solve", f"contract: solve does not complete a smoke task ({why})")
    on_check("solve", None)
    if served() <= before:
        return _failed(
            on_check,
            "model request",
            "contract: solve made no model request through the gateway on the smoke task",
        )
    on_check("model request", None)
    for attempt in range(2, SMOKE_ATTEMPTS + 1):
        if changed:
            break
        _, changed = _smoke(sandbox, log_dir, env, smoke_steps, timeout_s, attempt)
    if not changed:
        return _failed(
            on_check,
            "smoke change",
            f"contract: solve made no real change to the smoke repo in "
            f"{SMOKE_ATTEMPTS} tries (only its test, or nothing)",
        )
    on_check("smoke change", None)
    sandbox.put_dir(code_dir, GATE_SELF)
    sandbox.write_file(GATE_INSTRUCTIONS, GATE_INSTRUCTION)
    before = served()
    improve = sandbox.exec(
        [
            "python3",
            "-m",
            "agent",
            "improve",
            "--workdir",
            GATE_SELF,
            "--instructions",
            GATE_INSTRUCTIONS,
            "--budget-steps",
            "1",
        ],
        cwd=AGENT,
        env={**env, **GATE_CONTEXT},
        timeout=timeout_s,
    )
    (log_dir / "validate-improve.log").write_text(
        f"exit {improve.returncode}\n{improve.stdout}\n{improve.stderr}"
    )
    if not improve.ok:
        why = (
            "timed out"
            if improve.timed_out
            else f"exit {improve.returncode}: {output_tail(improve.stdout + improve.stderr)}"
        )
        return _failed(on_check, "improve", f"contract: improve does not start and exit cleanly ({why})")
    if served() <= before:  # a stub that exits 0 (a child may rewrite improve's body as `pass`)
        return _failed(
            on_check,
            "improve",
            "contract: improve made no model request through the gateway, so it cannot change anything",
        )
    on_check("improve", None)
    return Verdict(True)


def dgm_compiled(outcomes: Mapping[str, tuple[str, bool]], expected_tasks: int) -> Verdict:
    """DGM's "compiled" check of a child after its first evaluation stage (utils/evo_utils.py,
    is_compiled_self_improve): every task of the stage was evaluated, and at least one evaluation
    produced a non-empty patch. `outcomes` maps task -> (outcome, patch was empty). An option beside
    the gate above, not part of it: DGM keeps such a child out of its archive."""
    evaluated = {task for task, (outcome, _) in outcomes.items() if outcome != "infra"}
    if len(evaluated) < expected_tasks:
        return Verdict(False, f"not compiled: {len(evaluated)} of {expected_tasks} tasks evaluated")
    if all(empty for task, (_, empty) in outcomes.items() if task in evaluated):
        return Verdict(False, "not compiled: every patch of the stage is empty")
    return Verdict(True)
