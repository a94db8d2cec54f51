"""Grading SWE-bench tasks as the harness does, in a fresh container of the instance image
(docs/design.md §Trust boundaries).

The patch is applied in /testbed and the instance's own eval script runs (it resets the test files,
applies the test patch, runs the tests) by evolve/tasks/swebench_grader.py in the container: the
grader as root, the eval script as uid 1000. Resolved iff every FAIL_TO_PASS test now passes and
every PASS_TO_PASS test still does. Where the tests run under pytest, which test passed comes from
per-test records sent over a pipe only the grader reads (the tested code can print any harness log
line it likes); other runners are judged from the log by the harness's own parser (docs/tasks.md "SWE-bench
and Polyglot inside a run" says what that leaves open).
"""

from __future__ import annotations

import json
import re
import secrets
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from evolve.sandbox.types import Sandbox, SandboxLimits, SandboxUnavailable
from evolve.tasks import grader_canaries
from evolve.tasks.check import CheckReport, TaskCheck
from evolve.tasks.grading import STAGED, Grade, GradeOutcome, grader_reply
from evolve.tasks.swebench import DOCKER_HUB, NEEDS, TESTBED, SWEbenchUnavailable, hub_url, task_instance
from evolve.tasks.swebench_grader import MARKER, first_token
from evolve.tasks.types import Task, TaskError, TaskSuite

WORKDIR = TESTBED
STAGE = "/tmp/evolve-swebench-grade"
_HERE = Path(__file__).parent
_STAGED = ("swebench_grader.py", *STAGED)
# a writable root, capped by layer_disk
LIMITS = SandboxLimits(cpus=2.0, memory="8g", pids=4096, wall_clock_s=3600.0, disk=None)

SandboxFactory = Callable[[str, str], Sandbox]


def harness():
    """The harness functions this module uses; TaskError when the extra is not installed."""
    try:
        from swebench.harness import grading
        from swebench.harness.constants import START_TEST_OUTPUT, EvalType, ResolvedStatus
        from swebench.harness.utils import make_test_spec
    except ImportError as exc:
        raise TaskError("grading SWE-bench needs the swebench extra: pip install 'evolve[swebench]'") from exc
    return grading, EvalType, ResolvedStatus, make_test_spec, START_TEST_OUTPUT


def swebench_sandbox(
    image: str, job: str, *, run_id: str = "tasks", limits: SandboxLimits = LIMITS
) -> Sandbox:
    """A fresh grading container of an instance image (for `evolve tasks check`; a run's come from its
    sandbox factory): root owns /testbed there, so the grader runs as root, with only the capabilities it
    needs to run the tests as uid 1000 (evolve.sandbox.factory.GRADER_CAPS), and no network."""
    from evolve.sandbox.docker_backend import DockerSandbox
    from evolve.sandbox.factory import GRADER_CAPS

    ensure_image(image)
    return DockerSandbox.create(
        image, run_id=run_id, job_id=job, limits=limits, user="root", cap_add=GRADER_CAPS
    )


def ensure_image(image: str) -> None:
    """The image is here, or is pulled; SWEbenchUnavailable (saying what is missing and why) otherwise."""
    import docker
    import docker.errors

    try:
        client = docker.from_env(timeout=600)
    except docker.errors.DockerException as exc:
        raise SandboxUnavailable(f"cannot reach the Docker engine: {exc}") from exc
    try:
        client.images.get(image)
    except docker.errors.ImageNotFound:
        try:
            client.images.pull(image)
        except docker.errors.APIError as exc:
            raise SWEbenchUnavailable(
                f"the SWE-bench image {image} is not on this machine and cannot be pulled from {DOCKER_HUB} "
                f"({exc.explanation or exc}). " + NEEDS.format(hub=hub_url())
            ) from exc
    finally:
        client.close()


def grade_swebench(
    sandbox: Sandbox, task: Task, patch: str, key: str | None = None, *, dropped: tuple[str, ...] = ()
) -> Grade:
    """Apply `patch` (empty: the untouched repo) in `sandbox`, run the eval script, judge as the harness.

    SandboxUnavailable when grading itself failed (no verdict came back)."""
    grading, eval_type, resolved_status, make_test_spec, start_marker = harness()
    try:
        spec = make_test_spec(task_instance(task))
    except KeyError as exc:  # swebench 5 reads the eval script, parser and image from the instance itself
        raise TaskError(
            f"SWE-bench instance {task.id} lacks {exc} (a dataset of the swebench 5 format has it)"
        ) from exc
    key, start = key or task.id, time.monotonic()
    expected = [*spec.FAIL_TO_PASS, *spec.PASS_TO_PASS]
    with tempfile.TemporaryDirectory(prefix="evolve-swebench-") as tmp:
        stage = Path(tmp)
        for name in _STAGED:
            (stage / name).write_text((_HERE / name).read_text())
        (stage / "patch.diff").write_text(patch if not patch or patch.endswith("\n") else patch + "\n")
        prelude, tests = split_eval_script(spec.eval_script, start_marker)
        (stage / "manifest.json").write_text(
            json.dumps(
                {
                    "testbed": WORKDIR,
                    "prelude": prelude,
                    "tests": tests,
                    "timeout": task.test_timeout_s,
                    "expected": expected,
                    "isolate": True,
                    "canary_seed": secrets.token_hex(16),
                }
            )
        )
        sandbox.put_dir(stage, STAGE)
    done = sandbox.exec(
        ["python3", f"{STAGE}/swebench_grader.py", f"{STAGE}/manifest.json"],
        timeout=task.test_timeout_s + 300,
    )
    if MARKER not in done.stdout:
        raise SandboxUnavailable(
            f"the SWE-bench grader produced no results (exit {done.returncode}, timed out "
            f"{done.timed_out}): {(done.stderr or done.stdout)[-800:]}"
        )
    reply = grader_reply(done.stdout.rsplit(MARKER, 1)[1], done.truncated)
    if not reply["isolated"]:
        raise SandboxUnavailable(
            "the SWE-bench grading sandbox's grader is not root, so it cannot run the tests as another uid"
        )
    log = str(reply["output"])

    def graded(outcome: GradeOutcome, detail: str) -> Grade:
        return Grade(key, outcome, detail, log[-20000:], time.monotonic() - start, dropped)

    if not reply["applied"]:
        return graded("fail", "the patch does not apply")
    if reply["timed_out"]:
        return graded("timeout", f"the tests ran past {task.test_timeout_s:g}s")
    if "pytest" in spec.eval_script.split(start_marker, 1)[-1]:
        planted = dict(reply.get("canaries", {}))
        forged, unreported = grader_canaries.verdict(reply["records"], planted, _same_test)
        if forged:
            return graded("forged", forged)
        failing = failing_from_records(reply["records"], expected)
        if failing == [] and unreported:
            return graded("forged", grader_canaries.not_reported(unreported))
    else:
        failing = _failing_from_log(grading, eval_type, spec, log)
    if failing is None:
        return graded("fail", "no test results (the test patch or the tests did not run)")
    if not failing:
        return graded("pass", "resolved")
    return graded("fail", f"{resolved_status.NO.value}: failing {', '.join(failing[:5])}")


ENVIRONMENT_LINE = re.compile(r"(source |conda activate |export |cd )")
"""Lines of an eval script's prelude that set up the tests' environment (repeated before the tests)."""


def split_eval_script(script: str, start_marker: str) -> tuple[str, str]:
    """An instance's eval script (trusted: the dataset's) as its prelude and its tests: the prelude's
    environment lines (outside its heredocs), then everything from the start-of-output marker."""
    prelude, marker, rest = script.partition(f": '{start_marker}'")
    if not marker:
        raise TaskError(f"the eval script lacks the harness's {start_marker!r} marker")
    environment, heredoc = [], None
    for line in prelude.splitlines():
        if heredoc is not None:
            heredoc = None if line == heredoc else heredoc
        elif "<<'" in line:
            heredoc = line.split("<<'", 1)[1].split("'", 1)[0]
        elif ENVIRONMENT_LINE.match(line):
            environment.append(line)
    return prelude, "\n".join(["set -uxo pipefail", *environment, marker + rest])


def failing_from_records(records: list[dict], expected: list[str]) -> list[str] | None:
    """The expected tests not reported passed by the grader's pipe (a test passes when its call passed
    and none of its phases failed); None when the records are malformed (cut, or not the plugin's)."""
    if any("malformed" in r for r in records):
        return None
    status: dict[str, str] = {}
    for record in records:
        if "test" not in record:
            continue
        name = first_token(str(record["test"]))
        if record.get("outcome") == "failed":
            status[name] = "failed"
        elif (
            record.get("outcome") == "passed"
            and record.get("when") == "call"
            and status.get(name) != "failed"
        ):
            status[name] = "passed"
    return [name for name in expected if status.get(name) != "passed"]


def _same_test(reported: str, name: str) -> bool:
    """Whether a reported pytest id is test `name` (any of its parametrised cases)."""
    test = first_token(reported)
    return test == name or test.split("[", 1)[0] == name


def _failing_from_log(grading, eval_type, spec, log: str) -> list[str] | None:
    """The harness's own reading of the eval script's log (runners the results plugin cannot join)."""
    with tempfile.TemporaryDirectory(prefix="evolve-swebench-") as tmp:
        log_file = Path(tmp) / "test_output.txt"
        log_file.write_text(log)
        status, found = grading.get_logs_eval(spec, str(log_file))
    if not found:
        return None
    gold = {"FAIL_TO_PASS": spec.FAIL_TO_PASS, "PASS_TO_PASS": spec.PASS_TO_PASS}
    report = grading.get_eval_tests_report(
        status, gold, eval_type=eval_type(spec.eval_type or "pass_and_fail")
    )
    return list(report["FAIL_TO_PASS"]["failure"] + report["PASS_TO_PASS"]["failure"])


def check_swebench(suite: TaskSuite, make_sandbox: SandboxFactory = swebench_sandbox) -> CheckReport:
    """Each instance's gold patch must resolve it and the untouched repo must not; one fresh sandbox each."""
    checks, errors = [], []
    for task in suite:
        try:
            grades = []
            for variant, patch in (("reference", task.reference_patch), ("untouched", "")):
                with make_sandbox(task.image, f"check-{task.id}-{variant}") as sandbox:
                    grades.append(grade_swebench(sandbox, task, patch, f"{task.id}#{variant}"))
            checks.append(TaskCheck(task.id, *grades))
        except SandboxUnavailable:
            errors.append(task.id)
    return CheckReport(suite.name, tuple(checks), tuple(errors))
