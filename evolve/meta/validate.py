"""The validation gate: a child becomes a valid node only if it still works as an agent.

Checks, in order, each in the same fresh sandbox: a non-empty diff; the agent still imports; its
own tests pass; `python -m agent solve` completes (exits 0) on a trivial smoke task.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from evolve.sandbox.types import Sandbox

AGENT = "/work/agent"
SMOKE_REPO, SMOKE_PROBLEM = "/work/smoke", "/work/smoke-problem.md"
SMOKE_FILES = {
    "greet.py": 'def greet(name):\n    """Return a greeting for `name`."""\n    raise NotImplementedError\n',
    "test_greet.py": "from greet import greet\n\n\ndef test_greet():\n    assert greet('Ada') == 'Hello, Ada!'\n",
}
SMOKE_STATEMENT = "Implement `greet(name)` in greet.py so that it returns 'Hello, NAME!' (e.g. 'Hello, Ada!').\n"


@dataclass(frozen=True)
class Verdict:
    valid: bool
    reason: str | None = None


def _tail(text: str, limit: int = 600) -> str:
    text = text.strip()
    return text if len(text) <= limit else "..." + text[-limit:]


def validate_child(sandbox: Sandbox, code_dir: Path, diff: str, log_dir: Path, *,
                   channel_env: Mapping[str, str], smoke_steps: int = 2, timeout_s: float = 600.0) -> Verdict:
    """Run the gate; the first failing check is the reason."""
    if not diff.strip():
        return Verdict(False, "empty diff: the agent changed nothing")
    sandbox.put_dir(code_dir, AGENT)
    imports = sandbox.exec(["python3", "-c", "import agent, agent.__main__"], cwd=AGENT, timeout=60)
    if not imports.ok:
        return Verdict(False, f"the agent no longer imports: {_tail(imports.stderr)}")
    tests = sandbox.exec(["python3", "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", "tests"],
                         cwd=AGENT, timeout=timeout_s)
    (log_dir / "validate-tests.log").write_text(tests.stdout + tests.stderr)
    if not tests.ok:
        why = "timed out" if tests.timed_out else _tail(tests.stdout + tests.stderr)
        return Verdict(False, f"the agent's own tests fail: {why}")
    for name, text in SMOKE_FILES.items():
        sandbox.write_file(f"{SMOKE_REPO}/{name}", text)
    sandbox.write_file(SMOKE_PROBLEM, SMOKE_STATEMENT)
    smoke = sandbox.exec(
        ["python3", "-m", "agent", "solve", "--workdir", SMOKE_REPO, "--problem", SMOKE_PROBLEM,
         "--budget-steps", str(smoke_steps)],
        cwd=AGENT, env={**channel_env, "PYTHONDONTWRITEBYTECODE": "1"}, timeout=timeout_s,
    )
    (log_dir / "validate-smoke.log").write_text(f"exit {smoke.returncode}\n{smoke.stdout}\n{smoke.stderr}")
    if not smoke.ok:
        why = "timed out" if smoke.timed_out else f"exit {smoke.returncode}: {_tail(smoke.stdout + smoke.stderr)}"
        return Verdict(False, f"solve does not complete a smoke task ({why})")
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
