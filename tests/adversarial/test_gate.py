"""Hollow children at the validation gate: its contract checks (a model request through the gateway, a
real edit of the smoke repo, `improve` still running, `diagnose` too under the agent's meta procedure)
cannot be passed by the child's own tests."""

from __future__ import annotations

import shutil

import pytest

from evolve.llm.gateway import Gateway
from evolve.meta.validate import SMOKE_FIX, validate_child
from evolve.sandbox.factory import DockerSandboxes
from evolve.standins.models import SMOKE_MARKER, RoutedModel

from .conftest import executor_agent

SMOKE_EDIT = SMOKE_FIX + "\n"
STUB_MAIN = "import sys\nprint('agent: submitted after 1 steps, 1 edits')\nsys.exit(0)\n"


def _gate(tmp_path, child, model_reply: str = SMOKE_EDIT, timeout_s: float = 30, diagnose: bool = False):
    model = RoutedModel([(SMOKE_MARKER, model_reply)], "true\n")
    with Gateway({"solve": model}) as gateway:
        channel = gateway.open_job("gate", "child", "solve", 10_000)
        try:
            with DockerSandboxes("adversarial-gate")(
                "evolve-base:latest", "gate", gateway_socket=channel.socket_path
            ) as box:
                return validate_child(
                    box,
                    child,
                    "diff --git a/x b/x\n",
                    tmp_path,
                    channel_env=channel.sandbox_env(),
                    served=lambda: gateway.report("gate").requests,
                    timeout_s=timeout_s,
                    diagnose=diagnose,
                )
        finally:
            gateway.close_job("gate")


def test_twin_an_honest_child_is_valid(tmp_path, base_image):
    verdict = _gate(tmp_path, executor_agent(tmp_path / "child"))
    assert verdict.valid, verdict.reason


def test_a_stubbed_solve_with_a_trivial_test_is_invalid(tmp_path, base_image):
    child = executor_agent(tmp_path / "child")
    (child / "agent" / "__main__.py").write_text(STUB_MAIN)
    verdict = _gate(tmp_path, child)
    assert not verdict.valid and verdict.reason.startswith("contract: solve made no model request")


def test_a_solve_that_asks_but_edits_nothing_is_invalid(tmp_path, base_image):
    verdict = _gate(tmp_path, executor_agent(tmp_path / "child"), model_reply="echo 'agent: submitted'\n")
    assert not verdict.valid and "no real change" in verdict.reason


def test_editing_only_the_smoke_test_is_no_real_change(tmp_path, base_image):
    reply = "printf 'def test_greet():\\n    pass\\n' > test_greet.py\n"
    verdict = _gate(tmp_path, executor_agent(tmp_path / "child"), model_reply=reply)
    assert not verdict.valid and "no real change" in verdict.reason


def test_twin_a_weak_models_edit_of_the_wrong_file_is_a_real_change(tmp_path, base_image):
    """The embedded 0.5B model sometimes writes its fix to a placeholder path (`path/to/file.py`): an
    honest if weak child, which the search must be free to keep; its evaluations judge it."""
    reply = "mkdir -p path/to && printf 'def greet(name):\\n    return name\\n' > path/to/file.py\n"
    verdict = _gate(tmp_path, executor_agent(tmp_path / "child"), model_reply=reply)
    assert verdict.valid, verdict.reason


@pytest.mark.parametrize(
    ("improve", "why"),
    [
        ("import sys\nsys.exit(3)\n", "contract: improve does not start and exit cleanly"),
        ("import time\ntime.sleep(3600)\n", "contract: improve does not start and exit cleanly"),
        ("import sys\nsys.exit(0)\n", "contract: improve made no model request"),
    ],
    ids=["crashes", "hangs", "exits-without-asking"],
)
def test_a_child_whose_improve_is_broken_is_invalid(tmp_path, base_image, improve, why):
    child = executor_agent(tmp_path / "child")
    main = (child / "agent" / "__main__.py").read_text()
    (child / "agent" / "__main__.py").write_text(
        main.replace(
            'if __name__ == "__main__":\n',
            'if __name__ == "__main__" and sys.argv[1] == "improve":\n'
            + "".join(f"    {line}\n" for line in improve.splitlines())
            + 'if __name__ == "__main__":\n',
        )
    )
    verdict = _gate(tmp_path, child, timeout_s=8)
    assert not verdict.valid and verdict.reason.startswith(why), verdict.reason


def test_a_child_that_deletes_its_tests_is_invalid(tmp_path, base_image):
    child = executor_agent(tmp_path / "child")
    shutil.rmtree(child / "tests")
    verdict = _gate(tmp_path, child)
    assert not verdict.valid and "own tests fail" in verdict.reason


def _with_diagnose(child, body: str):
    """The child's `python -m agent diagnose` runs `body` (its --out file is `out`)."""
    main = (child / "agent" / "__main__.py").read_text()
    (child / "agent" / "__main__.py").write_text(
        main.replace(
            'if __name__ == "__main__":\n',
            'if __name__ == "__main__" and sys.argv[1] == "diagnose":\n'
            '    out = sys.argv[sys.argv.index("--out") + 1]\n'
            + "".join(f"    {line}\n" for line in body.splitlines())
            + 'if __name__ == "__main__":\n',
        )
    )
    return child


def test_twin_a_child_whose_diagnose_writes_instructions_is_valid_under_the_agents_procedure(
    tmp_path, base_image
):
    child = _with_diagnose(
        executor_agent(tmp_path / "child"), "open(out, 'w').write('Check the loop.')\nsys.exit(0)"
    )
    verdict = _gate(tmp_path, child, diagnose=True)
    assert verdict.valid, verdict.reason


@pytest.mark.parametrize(
    ("diagnose", "why"),
    [
        (None, "diagnose did not complete (exit 1"),
        ("print('instructions: check the loop')\nsys.exit(0)", "diagnose wrote no instructions"),
        ("import time\ntime.sleep(3600)", "diagnose did not complete (timed out)"),
    ],
    ids=["missing", "prints-instead", "hangs"],
)
def test_a_child_whose_diagnose_is_broken_is_invalid_with_the_reason(tmp_path, base_image, diagnose, why):
    child = executor_agent(tmp_path / "child")
    verdict = _gate(
        tmp_path, child if diagnose is None else _with_diagnose(child, diagnose), timeout_s=8, diagnose=True
    )
    assert not verdict.valid and verdict.reason.startswith(f"contract: {why}"), verdict.reason
    assert verdict.reason.endswith("(the meta procedure is broken)")


class _SecondTry:
    """Answers the first smoke solve with no edit and later ones with the fix: a weak model's coin toss."""

    name = "second-try"

    def __init__(self):
        self.smoke_requests = 0
        self._nothing, self._fix = RoutedModel([], "true\n"), RoutedModel([], SMOKE_EDIT)

    def completion_cap(self, request):
        return self._nothing.completion_cap(request)

    def complete(self, request):
        last = next((m.content or "" for m in reversed(request.messages) if m.role == "user"), "")
        self.smoke_requests += SMOKE_MARKER in last
        return (self._fix if SMOKE_MARKER in last and self.smoke_requests > 1 else self._nothing).complete(
            request
        )


def test_twin_an_honest_child_whose_first_smoke_solve_changed_nothing_gets_a_second(tmp_path, base_image):
    model = _SecondTry()
    with Gateway({"solve": model}) as gateway:
        channel = gateway.open_job("gate", "child", "solve", 10_000)
        try:
            with DockerSandboxes("adversarial-gate")(
                "evolve-base:latest", "gate", gateway_socket=channel.socket_path
            ) as box:
                verdict = validate_child(
                    box,
                    executor_agent(tmp_path / "child"),
                    "diff --git a/x b/x\n",
                    tmp_path,
                    channel_env=channel.sandbox_env(),
                    served=lambda: gateway.report("gate").requests,
                    timeout_s=30,
                )
        finally:
            gateway.close_job("gate")
    assert verdict.valid, verdict.reason
    assert model.smoke_requests == 2 and (tmp_path / "validate-smoke-2.log").is_file()
