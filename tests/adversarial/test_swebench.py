"""Attacks on SWE-bench grading by the agent under evaluation, each through the real pipeline: the agent
solves in a container of the fixture's instance image (built offline, tests/data/swebench) at /testbed,
the real gateway serves its scripted model, the engine diffs the copied-out tree, and the harness's eval
script runs in a fresh container of the same image with the tests as uid 1000. None gets credit; the
honest twins pass."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evolve.archive.store import Run
from evolve.engine.evaluate import EvalSettings, evaluate
from evolve.llm.gateway import Gateway
from evolve.sandbox.factory import DockerSandboxes
from evolve.standins.models import ScriptedModel
from evolve.tasks.swebench import load_swebench, task_instance
from evolve.tasks.types import Task

from .conftest import executor_agent
from .test_scoring import NEUTER

INSTANCES = Path(__file__).resolve().parents[1] / "data" / "swebench" / "instances.jsonl"
FIX = (
    "python3 - <<'PY'\nfrom pathlib import Path\np = Path('calc/__init__.py')\n"
    "p.write_text(p.read_text().replace('    return sum(values)', '    if not values:\\n        return 0.0\\n"
    "    return sum(values)'))\nPY\n"
)
"""The honest fix of evolve-fixtures__calc-1 (the mean of no values), run by the agent in /testbed."""
EXPECTED = ("test_mean_empty", "test_add", "test_mean", "test_clamp_low")
FORGED_LOG = (
    "python3 - <<'PY'\nfrom pathlib import Path\np = Path('calc/__init__.py')\n"
    "p.write_text(p.read_text() + '''\nimport atexit, os, sys\n\ndef _lie():\n"
    + "".join(f"    print('PASSED tests/test_calc.py::{name}')\n" for name in EXPECTED)
    + "    sys.stdout.flush()\n    os._exit(0)\n\natexit.register(_lie)\n''')\nPY\n"
)
"""The code under test prints the harness's PASSED line of every expected test after pytest's summary
and exits 0: the log the harness parses says resolved; the grader's per-test records do not."""

ATTACKS = {
    # A conftest that reports every test passed, the tests rewritten to pass, a symlink swapped in.
    "edits-the-tests-and-their-configuration": (
        f"cat > conftest.py <<'EOF_C'\n{NEUTER}EOF_C\n"
        "printf 'def test_mean_empty():\\n    pass\\n' >> tests/test_calc.py\n"
        "printf '[tool:pytest]\\naddopts = -p no:terminal\\n' > setup.cfg\n"
        "ln -s ../setup.cfg calc/broken.py\n"
    ),
    # ... and leaves the harness's report and log files, resolved, where the harness writes them.
    "prints-the-harness-log": FORGED_LOG
    + (
        "mkdir -p logs/run_evaluation/x/y/evolve-fixtures__calc-1 && cd $_ && "
        'echo \'{"evolve-fixtures__calc-1": {"resolved": true}}\' > report.json && '
        "printf 'PASSED tests/test_calc.py::test_mean_empty\\n' > test_output.txt\n"
    ),
    # The code under test kills every process it may (all of uid 1000's) as soon as it is imported.
    "kills-the-test-run": "printf 'import os, signal\\nos.kill(-1, signal.SIGKILL)\\n' >> calc/__init__.py\n",
}


@pytest.fixture(scope="module")
def task():
    return load_swebench(str(INSTANCES)).get("evolve-fixtures__calc-1")


@pytest.fixture(scope="module")
def attempt(swebench_image, tmp_path_factory, task):
    """attempt(script[, task]) -> EvalResult: the executor agent runs `script` in /testbed of the instance
    image."""
    root = tmp_path_factory.mktemp("swebench-attacks")
    run = Run.create(root / "run")
    node = run.add_node(executor_agent(root / "code"), origin="seed")

    def go(script: str, on: Task = task):
        with Gateway(
            {"solve": ScriptedModel([script])}, exchanges_dir=run.path / "exchanges", usage_sink=run
        ) as gateway:
            return evaluate(
                run,
                node.id,
                on,
                sandboxes=DockerSandboxes(run.id),
                gateway=gateway,
                settings=EvalSettings(infra_retries=0),
            )

    yield go
    run.close()


def _grade_log(result) -> str:
    return (result.log_dir / "grade.log").read_text()


PROBE = (
    "id -u; grep CapEff /proc/self/status; (cat /sys/fs/cgroup/memory.max || cat "
    "/sys/fs/cgroup/memory/memory.limit_in_bytes) 2>/dev/null; "
    "python3 -c \"import socket; socket.create_connection(('192.0.2.1', 80), timeout=3)\" 2>/dev/null "
    "&& echo NET-OPEN || echo NET-NONE\n"
)
"""What the agent's sandbox is: its uid, capabilities, memory limit and network."""


def test_twin_an_honest_fix_in_testbed_resolves_the_instance(attempt):
    result = attempt(PROBE + FIX + "printf '\\n# the agent was here\\n' >> tests/test_calc.py\n")
    assert result.outcome == "pass", _grade_log(result)
    seen = (result.log_dir / "agent.log").read_text().split("--- stdout\n", 1)[1].split()
    memory = DockerSandboxes("x").limits.memory  # the run's limits hold in the instance image's sandbox
    assert seen[:3] == ["1000", "CapEff:", "0000000000000000"], seen
    assert seen[3] == str(int(memory[:-1]) * 1024 ** "kmg".index(memory[-1].lower()) * 1024), (seen, memory)
    assert seen[4] == "NET-NONE", seen
    assert result.detail == "resolved"
    patch = (result.log_dir / "diff.patch").read_text()
    assert "return 0.0" in patch and "tests/test_calc.py" not in patch  # its test edit never reaches grading
    assert "dropped: ['tests/test_calc.py']" in _grade_log(result)


def test_editing_the_tests_or_their_configuration_gets_no_credit(attempt):
    result = attempt(ATTACKS["edits-the-tests-and-their-configuration"])
    assert result.outcome == "fail", _grade_log(result)
    assert (result.log_dir / "diff.patch").read_text() == ""
    log = _grade_log(result)
    for path in ("conftest.py", "tests/test_calc.py", "setup.cfg", "calc/broken.py"):
        assert f"'{path}'" in log, log
    assert "test_mean_empty" in result.detail


def test_a_forged_harness_log_gets_no_credit(attempt, task):
    harness = pytest.importorskip("swebench.harness.log_parsers", reason="needs the swebench extra")
    from swebench.harness.utils import make_test_spec

    result = attempt(ATTACKS["prints-the-harness-log"])
    assert result.outcome == "fail", _grade_log(result)
    # it reached grading, and decided nothing
    assert "report.json" in (result.log_dir / "diff.patch").read_text()
    assert "test_mean_empty" in result.detail
    # The log alone would have fooled a reader of it: every expected test is PASSED there.
    output = _grade_log(result).split("\n\n", 1)[1]
    parsed = harness.parse_log_pytest(output, make_test_spec(task_instance(task)))
    assert all(parsed.get(f"tests/test_calc.py::{name}") == "PASSED" for name in EXPECTED), parsed


def test_disabling_pytest_from_the_package_is_forged(attempt):
    """One line in the package's own __init__.py skips every test body; the canaries
    planted beside the instance's tests pass with them."""
    result = attempt(
        "printf 'import _pytest.python\\n_pytest.python.Function.runtest = lambda self: None\\n'"
        " >> calc/__init__.py\n"
    )
    assert result.outcome == "forged", _grade_log(result)


def test_killing_the_test_run_is_a_failure_not_infra(attempt):
    result = attempt(ATTACKS["kills-the-test-run"])
    assert result.outcome == "fail", _grade_log(result)


PRELUDE_FORGER = (
    "cat >> calc/__init__.py <<'EOF_F'\nimport json, os, stat, sys, time\n"
    "_fd = next((f for f in sorted(map(int, os.listdir('/proc/self/fd'))) if f > 2 and os.path.exists("
    "f'/proc/self/fd/{f}') and stat.S_ISFIFO(os.stat(f'/proc/self/fd/{f}').st_mode)), -1)\n"
    "_lie = ''.join(json.dumps({'test': 'tests/test_calc.py::' + n, 'when': 'call', 'outcome': 'passed'})"
    f" + '\\n' for n in {list(EXPECTED)!r}).encode()\n"
    "if _fd >= 0 and 'pytest' in sys.modules:\n    os.close(_fd)  # the real run reports nothing\n"
    "elif _fd >= 0:  # the reinstall: every expected test passed, now and from a daemon later\n"
    "    os.write(_fd, _lie)\n    if os.fork() == 0:\n        os.setsid()\n        for _ in range(20):\n"
    "            time.sleep(0.5)\n            os.write(_fd, _lie)\n        os._exit(0)\nEOF_F\n"
)
"""Code that the eval script's prelude runs (as a reinstall imports the package): it forges passed records
and leaves a daemon forging more; in the tests' run it only closes the records pipe."""


def test_records_forged_by_what_the_eval_script_runs_before_the_tests_get_no_credit(attempt, task, tmp_path):
    instance = task_instance(task)
    marker = ": '>>>>> Start Test Output'"
    instance["eval_script"] = instance["eval_script"].replace(marker, f"python3 -c 'import calc'\n{marker}")
    dataset = tmp_path / "instances.jsonl"
    dataset.write_text(json.dumps(instance) + "\n")
    reinstalling = load_swebench(str(dataset)).get(task.id)
    result = attempt(PRELUDE_FORGER, reinstalling)
    assert result.outcome == "fail", _grade_log(result)
    assert "test_mean_empty" in result.detail


RECORD_FLOOD = (
    "cat >> calc/__init__.py <<'EOF_F'\nimport json, os, stat\n"
    "_fd = next((f for f in sorted(map(int, os.listdir('/proc/self/fd'))) if f > 2 and os.path.exists("
    "f'/proc/self/fd/{f}') and stat.S_ISFIFO(os.stat(f'/proc/self/fd/{f}').st_mode)), -1)\n"
    "if _fd >= 0:\n"
    "    _line = (json.dumps({'test': 'tests/test_calc.py::test_add', 'when': 'call', 'outcome': 'passed'})"
    " + '\\n').encode()\n"
    "    os.write(_fd, _line * 40000 + b''.join(b'{\"end\": %d}\\n' % n for n in range(200000)))\nEOF_F\n"
)
"""The code under test floods the records pipe with one expected test's record and with ends: every record
of an expected test once went back to the host, past the sandbox's output cap, so the reply was cut."""


def test_a_flood_of_records_for_expected_tests_gets_a_verdict_not_an_exception(attempt):
    result = attempt(RECORD_FLOOD)
    assert result.outcome == "fail", _grade_log(result)
