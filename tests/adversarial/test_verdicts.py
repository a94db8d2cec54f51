"""The code under test writing its own verdict, through the real pipeline (the executor agent in a Docker
sandbox, the real gateway with a scripted model, the engine's diff, the real grader): in-process
forgeries of a pytest run end `forged` (a test reported passed without the values of its checks, or the
canaries planted among the hidden tests pass with the real tests, or go unreported), or `fail` (root
compares the values the unsolved code computed); out-of-process HumanEval checks cannot be forged at
all. Never `pass`, never `infra`; each has an honest twin that passes beside the same machinery."""

from __future__ import annotations

import pytest

from evolve.engine.evaluate import EvalSettings, evaluate
from evolve.llm.gateway import Gateway
from evolve.sandbox.factory import DockerSandboxes
from evolve.standins.models import ScriptedModel
from evolve.tasks import load_suite

from .conftest import FIX
from .test_scoring import _append, _grade_log

PIPE = (
    "import json as _j, os as _o, stat as _s\n"
    "_fds = [int(_x) for _x in _o.listdir('/proc/self/fd') if int(_x) > 2]\n"
    "_fds = [_f for _f in _fds if _o.path.exists(f'/proc/self/fd/{_f}') and "
    "_s.S_ISFIFO(_o.stat(_f).st_mode)]\n"
)
"""Every pipe the process holds (its results pipe among them: no variable names it)."""
NAMES = (
    "('tests/test_structs_lru_recency.py::test_get_refreshes', "
    "'tests/test_structs_lru_recency.py::test_missing_key_default')"
)

FORGERIES = {
    # one line in the package's own __init__.py, every test body skipped
    "runtest disabled": "import _pytest.python\n_pytest.python.Function.runtest = lambda self: None\n",
    # every report rewritten to passed, no conftest needed
    "reports rewritten": (
        "import _pytest.reports as _r\n_orig = _r.TestReport.from_item_and_call\n"
        "def _pass(item, call):\n    rep = _orig(item, call)\n    rep.outcome = 'passed'\n    return rep\n"
        "_r.TestReport.from_item_and_call = staticmethod(_pass)\n"
    ),
    # the reporter's own tools poisoned: every record it serialises says passed
    "json.dumps patched": (
        "import json as _j\n_d = _j.dumps\n"
        "_j.dumps = lambda r, *a, **k: _d(dict(r, outcome='passed') if isinstance(r, dict) and 'outcome'"
        " in r else r, *a, **k)\n"
    ),
    "os.write patched": (
        "import os as _o\n_w = _o.write\n"
        "_o.write = lambda fd, data: _w(fd, data.replace(b'\"failed\"', b'\"passed\"'))\n"
    ),
}
WRITTEN = {
    # the real tests' records straight into the pipe, then an early exit
    "records for the real names, then os._exit": (
        PIPE + f"for _f in _fds:\n    for _t in {NAMES}:\n"
        "        _o.write(_f, (_j.dumps({'test': _t, 'when': 'call', 'outcome': 'passed'}) + "
        "'\\n').encode())\n"
        "    _o.write(_f, b'{\"end\": 0}\\n')\n_o._exit(0)\n"
    ),
    # ... from a thread, all the run long
    "a thread writing records": (
        PIPE
        + "import threading as _th, time as _ti\ndef _flood():\n    for _ in range(200):\n        for _f in "
        "_fds:\n"
        f"            for _t in {NAMES}:\n"
        "                _o.write(_f, (_j.dumps({'test': _t, 'when': 'call', 'outcome': 'passed'}) + "
        "'\\n').encode())\n"
        "        _ti.sleep(0.01)\n_th.Thread(target=_flood, daemon=True).start()\n"
    ),
    # ... at exit, after the real run reported its failures
    "atexit records": (
        PIPE + "import atexit as _a\ndef _lie():\n    for _f in _fds:\n"
        f"        for _t in {NAMES}:\n"
        "            _o.write(_f, (_j.dumps({'test': _t, 'when': 'call', 'outcome': 'passed'}) + "
        "'\\n').encode())\n"
        "_a.register(_lie)\n"
    ),
    # the runner's own function replaced (it logs each report before it returns it)
    "runner patched": (
        "import _pytest.runner as _r\n_orig = _r.call_and_report\n"
        "def _car(*a, **k):\n    rep = _orig(*a, **k)\n    rep.outcome = 'passed'\n    return rep\n"
        "_r.call_and_report = _car\n"
    ),
    # the runner's modules swapped in sys.modules for ones that report nothing failed
    "sys.modules poisoned": (
        "import sys as _s, _pytest.runner as _r\n"
        "class _Quiet:\n    def __getattr__(self, name):\n        return getattr(_r, name)\n"
        "    def call_and_report(self, *a, **k):\n        rep = _r.call_and_report(*a, **k)\n"
        "        rep.outcome = 'passed'\n        return rep\n"
        "_s.modules['_pytest.runner'] = _Quiet()\n"
    ),
    # a signal handler that ends the run the moment a test fails
    "SIGALRM exits clean": (
        "import signal as _sg, os as _o\n_sg.signal(_sg.SIGALRM, lambda *a: _o._exit(0))\n"
        "_sg.setitimer(_sg.ITIMER_REAL, 0.05)\n"
    ),
}


@pytest.mark.parametrize("name", list(FORGERIES))
def test_a_run_the_tested_code_made_to_pass_is_forged_or_fails(attempt, name):
    result = attempt(ScriptedModel([_append("structs/__init__.py", FORGERIES[name])]))
    assert result.outcome in {"forged", "fail"}, _grade_log(result)
    # the checks against a literal are root's: a body skipped sends none of their values (forged); a
    # report rewritten still sends the unsolved code's own wrong ones (fail)
    assert "checked value" in result.detail, result.detail


@pytest.mark.parametrize("name", list(WRITTEN))
def test_records_the_tested_code_writes_get_no_credit(attempt, name):
    result = attempt(ScriptedModel([_append("structs/__init__.py", WRITTEN[name])]))
    assert result.outcome in {"forged", "fail"}, _grade_log(result)


def test_twin_a_fix_beside_the_same_imports_and_a_thread_passes(attempt):
    harmless = (
        "import _pytest.python, _pytest.reports, _pytest.runner, json, os, signal, threading\n"
        "threading.Thread(target=lambda: None, daemon=True).start()\n"
    )
    result = attempt(ScriptedModel([FIX + _append("structs/__init__.py", harmless)]))
    assert result.outcome == "pass", _grade_log(result)
    assert "canary" not in _grade_log(result).lower()  # what the diagnosis reads names real tests only


@pytest.fixture
def humaneval_attempt(executor_node):
    """attempt(script) -> EvalResult: the executor agent runs `script` in HumanEval-0's repo."""
    run, node_id = executor_node
    task = load_suite("humaneval").get("HumanEval-0")

    def go(script: str):
        with Gateway(
            {"solve": ScriptedModel([script])}, exchanges_dir=run.path / "exchanges", usage_sink=run
        ) as gateway:
            return evaluate(
                run,
                node_id,
                task,
                sandboxes=DockerSandboxes(run.id),
                gateway=gateway,
                settings=EvalSettings(infra_retries=0),
            )

    return go


def _solution(body: str) -> str:
    """A shell script that gives HumanEval-0's `has_close_elements` the body `body`."""
    return (
        "python3 - <<'PY'\nfrom pathlib import Path\np = Path('solution.py')\n"
        f"p.write_text(p.read_text().replace('    raise NotImplementedError\\n', {body!r}))\nPY\n"
    )


HONEST = (
    "    return any(abs(a - b) < threshold for i, a in enumerate(numbers) for j, b in enumerate(numbers)"
    " if i != j)\n"
)
CALL_CHEATS = {
    # the expected record for `check` to every descriptor, then os._exit(0)
    "record and os._exit": (
        "    import os\n    for fd in range(3, 256):\n        try:\n"
        '            os.write(fd, b\'{"test": "check", "when": "call", "outcome": "passed"}\\n'
        '{"end": 0}\\n\')\n        except OSError:\n            pass\n    os._exit(0)\n'
    ),
    "an answer equal to everything": (
        "    class Any(int):\n        def __eq__(self, other):\n            return True\n"
        "        __hash__ = int.__hash__\n    return Any(1)\n"
    ),
    "builtins and the checker's modules patched": (
        "    import builtins, sys\n    builtins.AssertionError = type('N', (BaseException,), {})\n"
        "    sys.modules['math'] = None\n    return True\n"
    ),
}


def test_twin_an_honest_humaneval_solution_passes_out_of_process(humaneval_attempt):
    result = humaneval_attempt(_solution(HONEST))
    assert result.outcome == "pass", _grade_log(result)


@pytest.mark.parametrize("name", list(CALL_CHEATS))
def test_nothing_a_humaneval_candidate_does_in_its_process_passes(humaneval_attempt, name):
    result = humaneval_attempt(_solution(CALL_CHEATS[name]))
    assert result.outcome == "fail", _grade_log(result)
