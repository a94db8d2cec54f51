"""Grading SWE-bench tasks through the `swebench` package's harness, in a fresh sandbox of the instance image.

As the harness does: the patch is applied in /testbed (git apply, then more forgiving tools), the
instance's eval script runs (it resets the test files, applies the test patch, runs the tests between
markers), and the harness's log parser and report decide: resolved iff every FAIL_TO_PASS test now
passes and every PASS_TO_PASS test still does.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from evolve.sandbox.types import Sandbox, SandboxLimits, SandboxUnavailable
from evolve.tasks.check import CheckReport, TaskCheck
from evolve.tasks.grading import Grade, GradeOutcome
from evolve.tasks.swebench import DOCKER_HUB, NEEDS, SWEbenchUnavailable, hub_url, task_instance
from evolve.tasks.types import Task, TaskError, TaskSuite

WORKDIR = "/testbed"
PATCH_FILE = "/tmp/patch.diff"
EVAL_FILE = "/eval.sh"
GIT_APPLY = ("git apply --verbose", "git apply --verbose --3way", "git apply --verbose --reject",
             "patch --batch --forward --fuzz=5 -p1 -i")
"""The harness's order of attempts (swebench.harness.run_evaluation)."""
LIMITS = SandboxLimits(cpus=2.0, memory="8g", pids=4096, wall_clock_s=3600.0, disk=None)  # instance images write anywhere

SandboxFactory = Callable[[str, str], Sandbox]


def harness():
    """The harness functions this module uses; TaskError when the extra is not installed."""
    try:
        from swebench.harness import grading
        from swebench.harness.constants import EvalType, ResolvedStatus
        from swebench.harness.utils import make_test_spec
    except ImportError as exc:
        raise TaskError("grading SWE-bench needs the swebench extra: pip install 'evolve[swebench]'") from exc
    return grading, EvalType, ResolvedStatus, make_test_spec


def swebench_sandbox(image: str, job: str, *, run_id: str = "tasks", limits: SandboxLimits = LIMITS) -> Sandbox:
    """A fresh grading container of an instance image: root owns /testbed there, so the grader runs as root
    (without capabilities and network, as every sandbox). Its workdir stays /work: the sandbox hands that
    directory to uid 1000, which must not happen to /testbed."""
    from evolve.sandbox.docker_backend import DockerSandbox

    ensure_image(image)
    return DockerSandbox.create(image, run_id=run_id, job_id=job, limits=limits, user="root")


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
                f"({exc.explanation or exc}). " + NEEDS.format(hub=hub_url())) from exc
    finally:
        client.close()


def grade_swebench(sandbox: Sandbox, task: Task, patch: str, key: str | None = None) -> Grade:
    """Apply `patch` (empty: the untouched repo) in `sandbox`, run the eval script, let the harness judge."""
    grading, eval_type, resolved_status, make_test_spec = harness()
    try:
        spec = make_test_spec(task_instance(task))
    except KeyError as exc:  # swebench 5 reads the eval script, parser and image from the instance itself
        raise TaskError(f"SWE-bench instance {task.id} lacks {exc} (a dataset of the swebench 5 format has it)") from exc
    key = key or task.id
    start = time.monotonic()
    if patch.strip():
        applied, output = _apply(sandbox, patch)
        if not applied:
            return Grade(key, "fail", "the patch does not apply", output, time.monotonic() - start)
    sandbox.write_file(EVAL_FILE, spec.eval_script)
    # One stream, as the harness reads it: the markers (set -x, stderr) must bracket the test output.
    result = sandbox.exec(["bash", "-c", f"bash {EVAL_FILE} 2>&1"], cwd=WORKDIR, timeout=task.test_timeout_s)
    log = result.stdout + result.stderr
    if result.timed_out:
        return Grade(key, "timeout", f"the tests ran past {task.test_timeout_s:g}s", log[-20000:],
                     time.monotonic() - start)
    with tempfile.TemporaryDirectory(prefix="evolve-swebench-") as tmp:
        log_file = Path(tmp) / "test_output.txt"
        log_file.write_text(log)
        status, found = grading.get_logs_eval(spec, str(log_file))
    if not found:
        return Grade(key, "fail", "no test results (the test patch or the tests did not run)", log[-20000:],
                     time.monotonic() - start)
    gold = {"FAIL_TO_PASS": spec.FAIL_TO_PASS, "PASS_TO_PASS": spec.PASS_TO_PASS}
    report = grading.get_eval_tests_report(status, gold, eval_type=eval_type(spec.eval_type or "pass_and_fail"))
    resolution = grading.get_resolution_status(report)
    outcome: GradeOutcome = "pass" if resolution == resolved_status.FULL.value else "fail"
    failing = report["FAIL_TO_PASS"]["failure"] + report["PASS_TO_PASS"]["failure"]
    detail = "resolved" if outcome == "pass" else f"{resolution}: failing {', '.join(failing[:5]) or 'none'}"
    return Grade(key, outcome, detail, log[-20000:], time.monotonic() - start)


def _apply(sandbox: Sandbox, patch: str) -> tuple[bool, str]:
    sandbox.write_file(PATCH_FILE, patch if patch.endswith("\n") else patch + "\n")
    outputs = []
    for attempt, command in enumerate(GIT_APPLY):
        if attempt:  # a failed attempt can leave partial state: start again from a clean tree
            sandbox.exec(["bash", "-c", "git checkout -- . ; git clean -fdq"], cwd=WORKDIR, timeout=120)
        result = sandbox.exec(["bash", "-c", f"{command} {PATCH_FILE}"], cwd=WORKDIR, timeout=120)
        outputs.append(f"$ {command}\n{result.stdout}{result.stderr}")
        if result.returncode == 0:
            return True, outputs[-1]
    return False, "\n".join(outputs)[-20000:]


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
