"""Attacks aimed at the grader itself, in one shared grading sandbox: hand-made patches and test-runner
configuration in every name and place the runner reads it. None gets credit; honest twins pass."""

from __future__ import annotations

import uuid

import pytest

from evolve.sandbox.factory import grading_sandbox
from evolve.sandbox.types import SandboxLimits
from evolve.tasks.grading import GradeItem, grade_in
from evolve.tasks.tree_diff import diff_trees, tree_entries
from evolve.tasks.types import write_files

from .test_scoring import NEUTER

FORGE_RECORDS = (
    "import json as _j, os as _o, stat as _s\n"
    "def _pipe():\n    for _f in sorted(int(_x) for _x in _o.listdir('/proc/self/fd')):\n"
    "        try:\n            if _f > 2 and _s.S_ISFIFO(_o.fstat(_f).st_mode):\n                return _f\n"
    "        except OSError:\n            pass\n    return -1\n_fd = _pipe()\n"
)
"""Code that finds the results pipe its own process holds (no variable names it: the tests hold it all the
same)."""
ADDOPTS = "addopts = -p structs.neuter\n"


def _grade(box, task, patch):
    (grade,) = grade_in(box, [GradeItem("k", task, patch)], remote=f"/tmp/grade-{uuid.uuid4().hex[:8]}")
    return grade


def _patch(task, tmp_path, files: dict[str, str], fix: bool = False) -> str:
    """The engine's diff of the task repo with `files` written into it (and the reference fix)."""
    tree = write_files(task.repo, tmp_path / "tree")
    for rel, text in files.items():
        (tree / rel).parent.mkdir(parents=True, exist_ok=True)
        (tree / rel).write_text(text)
    patch = diff_trees(task.repo, tree_entries(tree))
    return patch + (task.reference_patch if fix else "")


RUNNER_CONFIG = {
    "conftest.py": NEUTER,
    "structs/conftest.py": NEUTER,
    "tests/conftest.py": NEUTER,
    "pytest.ini": "[pytest]\n" + ADDOPTS,
    ".pytest.ini": "[pytest]\n" + ADDOPTS,
    "tox.ini": "[pytest]\n" + ADDOPTS,
    "setup.cfg": "[tool:pytest]\n" + ADDOPTS,
    "pyproject.toml": "[tool.pytest.ini_options]\n" + ADDOPTS,
    "structs/evil.pth": "import structs.neuter\n",
    "sitecustomize.py": "import structs.neuter\n",
    "structs/usercustomize.py": "import structs.neuter\n",
    "pytest.py": "print('4 passed')\nraise SystemExit(0)\n",
    "_pytest/__init__.py": "raise SystemExit(0)\n",
    "evolve_results.py": "def pytest_sessionfinish(session, exitstatus):\n    pass\n",
}


@pytest.mark.parametrize("path", list(RUNNER_CONFIG))
def test_test_runner_configuration_anywhere_is_reverted(grader_box, task, tmp_path, path):
    patch = _patch(task, tmp_path, {"structs/neuter.py": NEUTER, path: RUNNER_CONFIG[path]})
    grade = _grade(grader_box, task, patch)
    assert grade.outcome == "fail" and path in grade.dropped, (grade.detail, grade.dropped)


def test_twin_the_reference_passes_beside_every_runner_configuration(grader_box, task, tmp_path):
    patch = _patch(task, tmp_path, {"structs/neuter.py": NEUTER, **RUNNER_CONFIG}, fix=True)
    grade = _grade(grader_box, task, patch)
    assert grade.outcome == "pass", (grade.detail, grade.output[-2000:])
    assert set(RUNNER_CONFIG) <= set(grade.dropped)


def _section(header: str, path_line: str) -> str:
    body = "".join(f"+{line}\n" for line in NEUTER.splitlines())
    return (
        f"{header}\nnew file mode 100644\n--- /dev/null\n+++ {path_line}\n"
        f"@@ -0,0 +1,{len(NEUTER.splitlines())} @@\n{body}"
    )


HEADERS = {
    "quoted": _section('diff --git "a/tests/conftest.py" "b/tests/conftest.py"', '"b/tests/conftest.py"'),
    "space-padded": _section("diff --git a/tests/conftest.py b/tests/conftest.py ", "b/tests/conftest.py"),
    "tab-padded": _section("diff --git a/conftest.py b/conftest.py\t", "b/conftest.py"),
}


@pytest.mark.parametrize("name", list(HEADERS))
def test_malformed_or_quoted_headers_never_smuggle_a_conftest(grader_box, task, tmp_path, name):
    benign = _patch(task, tmp_path, {"structs/extra.py": "X = 1\n"})
    grade = _grade(grader_box, task, benign + HEADERS[name])
    assert grade.outcome == "fail", (grade.detail, grade.dropped)
    assert grade.detail == "the patch does not apply" or any(p.endswith("conftest.py") for p in grade.dropped)


def test_an_unparseable_section_fails_the_whole_patch(grader_box, task):
    grade = _grade(
        grader_box, task, task.reference_patch + "diff --git a/x b/x\nthis is not a patch\n@@ nonsense\n"
    )
    assert (grade.outcome, grade.detail) == ("fail", "the patch does not apply")


def test_twin_the_reference_with_quoted_names_passes(grader_box, task, tmp_path):
    patch = _patch(task, tmp_path, {'we"ird name.py': "X = 1\n", "trailing .py ": "Y = 2\n"}, fix=True)
    assert '"b/we\\"ird name.py"' in patch
    assert _grade(grader_box, task, patch).outcome == "pass"


def test_records_forged_from_a_protected_file_are_never_read(grader_box, task, tmp_path):
    forge = FORGE_RECORDS + (
        "for _t in ('test_get_refreshes',):\n"
        "    _o.write(_fd, (_j.dumps({'test': 'tests/test_structs_lru_recency.py::' + _t, "
        "'when': 'call', 'outcome': 'passed'}) + '\\n').encode())\n"
    )
    grade = _grade(grader_box, task, _patch(task, tmp_path, {"sitecustomize.py": forge}))
    assert grade.outcome == "fail" and "sitecustomize.py" in grade.dropped


RESOURCE_ATTACKS = {
    "output flood": "import sys as _s\nfor _ in range(20000):\n    _s.stdout.write('x' * 10000 + '\\n')\n",
    "daemon holding the pipes": (
        "import subprocess as _p\n_p.Popen(['sleep', '600'], start_new_session=True)\n"
    ),
    "record flood": FORGE_RECORDS
    + 'for _ in range(200000):\n    _o.write(_fd, b\'{"test": "x", "outcome": "passed"}\\n\')\n',
}


@pytest.mark.parametrize("name", list(RESOURCE_ATTACKS))
def test_tests_that_flood_or_linger_get_a_plain_fail_never_infra(grader_box, task, tmp_path, name):
    init = task.repo["structs/__init__.py"].decode() + RESOURCE_ATTACKS[name]
    grade = _grade(grader_box, task, _patch(task, tmp_path, {"structs/__init__.py": init}))
    assert grade.outcome == "fail" and len(grade.output) < 100_000, grade.detail


def test_twin_the_reference_passes_beside_a_lingering_daemon(grader_box, task, tmp_path):
    init = task.repo["structs/__init__.py"].decode() + RESOURCE_ATTACKS["daemon holding the pipes"]
    grade = _grade(grader_box, task, _patch(task, tmp_path, {"structs/__init__.py": init}, fix=True))
    assert grade.outcome == "pass", grade.detail


def test_tests_that_exhaust_memory_die_before_the_grader(base_image, task, tmp_path):
    hog = (
        task.repo["structs/__init__.py"].decode()
        + "_hog = []\nwhile True:\n    _hog.append(bytearray(20_000_000))\n"
    )
    limits = SandboxLimits(cpus=1.0, memory="300m", pids=256, wall_clock_s=300)
    with grading_sandbox(base_image, "adversarial-oom", limits=limits) as box:
        grade = _grade(box, task, _patch(task, tmp_path, {"structs/__init__.py": hog}))
    assert grade.outcome == "fail", grade.detail  # a grade at all: the grader outlived the hog


SCRIPT_CHEATS = {
    "success line and os._exit(0) at import": (
        "print('ALL TESTS PASSED', flush=True)\nimport os as _o\n_o._exit(0)\n"
    ),
    "atexit os._exit(0) after a failed check": (
        "import atexit as _a, os as _o\n"
        "_a.register(lambda: (print('ALL TESTS PASSED', flush=True), _o._exit(0)))\n"
    ),
}


@pytest.mark.parametrize("name", list(SCRIPT_CHEATS))
def test_a_one_script_check_cannot_be_passed_by_exiting_early(grader_box, tmp_path, name):
    from evolve.tasks import load_suite

    task = load_suite("humaneval").get("HumanEval-3")
    stub = task.repo["solution.py"].decode()
    patch = _patch(task, tmp_path, {"solution.py": SCRIPT_CHEATS[name] + stub})
    grade = _grade(grader_box, task, patch)
    # the candidate's own process ends as it likes: no verdict there
    assert grade.outcome == "fail", grade.detail
    assert _grade(grader_box, task, task.reference_patch).outcome == "pass"  # the twin
