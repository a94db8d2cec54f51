"""Processes the agent leaves behind, through the real pipeline (the executor agent in a Docker sandbox,
the engine's transcript read and copy-out, the real grader): a daemon in its own session that stops
every other process of the agent's uid once the agent has exited once stopped the engine's own later
commands in the container (they run as that uid and waited without a deadline: `infra` after a minute,
never counted). No agent process outlives the agent's command now, whatever it is named and however it
forks; the honest twin leaves a sleeping daemon beside the fix and passes."""

from __future__ import annotations

import time

import pytest

from evolve.standins.models import ScriptedModel

from .conftest import FIX
from .test_scoring import _grade_log


def _daemon(body: str) -> str:
    """A shell line: a daemon in its own session, its descriptors closed (so the agent's command ends),
    that runs `body` (Python, indented by four) the moment the agent's process has exited."""
    return (
        "python3 - <<'PY'\nimport ctypes, os, signal, time\nif os.fork() == 0:\n    os.setsid()\n"
        "    os.closerange(0, 1024)\n    def agent_runs():\n        for pid in os.listdir('/proc'):\n"
        "            try:\n                if b'-m\\0agent\\0' in open(f'/proc/{pid}/cmdline', "
        "'rb').read():\n"
        "                    return True\n            except OSError:\n                pass\n"
        "        return False\n    while agent_runs():\n        time.sleep(0.001)\n"
        + body
        + "    os._exit(0)\nPY\n"
    )


STOP_OTHERS = (
    "    end = time.monotonic() + 120\n    while time.monotonic() < end:\n"
    "        for pid in os.listdir('/proc'):\n            if pid.isdigit() and int(pid) != os.getpid():\n"
    "                try:\n                    os.kill(int(pid), signal.SIGSTOP)\n"
    "                except OSError:\n                    pass\n        time.sleep(0.002)\n"
)
DAEMONS = {
    "a daemon that stops the engine's commands": _daemon(STOP_OTHERS),
    # the next forms: a name the host's /proc reader could not decode, and a pid that changes all the time
    "the same daemon named in bytes that are not UTF-8": _daemon(
        "    ctypes.CDLL(None).prctl(15, b'\\xff\\xfe\\xfd', 0, 0, 0)\n" + STOP_OTHERS
    ),
    "the same daemon forking anew every moment": _daemon(
        "    end = time.monotonic() + 120\n    while time.monotonic() < end:\n        if os.fork():\n"
        "            os._exit(0)\n        for pid in os.listdir('/proc'):\n"
        "            if pid.isdigit() and int(pid) != os.getpid():\n                try:\n"
        "                    os.kill(int(pid), signal.SIGSTOP)\n                except OSError:\n"
        "                    pass\n"
    ),
}


@pytest.mark.parametrize("name", list(DAEMONS))
def test_a_daemon_left_by_the_agent_cannot_stop_the_engine(attempt, name):
    started = time.monotonic()
    result = attempt(ScriptedModel([DAEMONS[name]]))
    assert result.outcome == "fail", result.detail  # graded: the copy-out and the grader ran
    assert time.monotonic() - started < 60


def test_twin_a_fix_beside_a_sleeping_daemon_passes(attempt):
    result = attempt(ScriptedModel([FIX + _daemon("    time.sleep(600)\n")]))
    assert result.outcome == "pass", _grade_log(result)
