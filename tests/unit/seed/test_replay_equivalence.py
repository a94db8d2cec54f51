"""The rewritten seed behaves as the seed it replaced (tests/data/seed_before, kept as it stood): for the same
scripted model replies, both send the same requests (messages and parameters, in order), write the same files
and transcript records, print the same line and exit with the same code."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import evolve.seed

NEW = Path(evolve.seed.__file__).parent
OLD = Path(__file__).parents[2] / "data" / "seed_before"

DRIVER = r"""
import contextlib, io, json, os, socketserver, sys, threading, time
from http.server import BaseHTTPRequestHandler
from pathlib import Path

seed, scenario = sys.argv[1], json.loads(sys.argv[2])
sys.path.insert(0, seed)
time.sleep = lambda seconds: None  # the model client's back-off
requests, replies = [], [tuple(r) for r in scenario["replies"]]


class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        requests.append([self.path, json.loads(self.rfile.read(int(self.headers["Content-Length"])))])
        status, content = replies.pop(0) if replies else (200, "```done\n```")
        reply = {"choices": [{"message": {"content": content}}], "usage": {"total_tokens": 7}}
        data = json.dumps(reply if status == 200 else {}).encode()
        self.send_response(status)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


class Server(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True

    def get_request(self):
        return self.socket.accept()[0], ("local", 0)


server = Server(scenario["socket"], Handler)
threading.Thread(target=server.serve_forever, daemon=True).start()
os.environ.update(scenario["env"])
for name in scenario["unset"]:
    os.environ.pop(name, None)
from agent.__main__ import main
from agent.evidence import agent_map

out, result = io.StringIO(), {}
with contextlib.redirect_stdout(out):
    try:
        result["exit"] = main(scenario["argv"])
    except SystemExit as exc:
        result["exit"] = exc.code
    except Exception as exc:  # diagnose lets a ModelError out: `python -m agent` exits 1
        result["raised"] = f"{type(exc).__name__}: {exc}"
result.update(stdout=out.getvalue(), requests=requests, own_map=agent_map(Path(seed)))
server.shutdown()
server.server_close()
print(json.dumps(result))
"""

TOOLS = '''"""Tools."""
import subprocess

LIMIT = 4000


def cap(text):
    return text[:LIMIT]


class Workspace:
    def __init__(self, root):
        self.root = root

    def bash(self, command):
        done = subprocess.run(["bash", "-c", command], capture_output=True, text=True)
        return done.stdout

    def write(self, path, text):
        return path
'''
AGENT_TEST = "from agent.tools import cap\n\n\ndef test_cap():\n    assert cap('x' * 5000) == 'x' * 4000\n"


def calc_repo(root: Path) -> None:
    (root / "repo" / "data").mkdir(parents=True)
    (root / "repo/calc.py").write_text(
        "def add(a, b):\n    return a - b\n\n\ndef sub(a, b):\n    return a - b\n"
    )
    (root / "repo/test_calc.py").write_text(
        "from calc import add\n\n\ndef test_add():\n    assert add(2, 2) == 4\n"
    )
    (root / "problem.md").write_text("Fix add in calc.py.")


def doctest_repo(root: Path) -> None:
    (root / "repo").mkdir()
    (root / "repo/solution.py").write_text(
        'def one():\n    """\n    >>> one()\n    1\n    """\n    raise NotImplementedError\n'
    )
    (root / "repo/notes.md").write_text("Nothing to see.\n")
    (root / "problem.md").write_text("Complete one in solution.py.")


def plain_repo(root: Path) -> None:
    (root / "repo").mkdir()
    (root / "repo/main.py").write_text("print('hi')\n")
    (root / "problem.md").write_text("Say hello.")


def agent_repo(root: Path, instructions: str) -> None:
    (root / "repo/agent").mkdir(parents=True)
    (root / "repo/tests").mkdir()
    (root / "repo/agent/__init__.py").write_text("")
    (root / "repo/agent/tools.py").write_text(TOOLS.replace("LIMIT = 4000", "LIMIT = 400"))
    (root / "repo/agent/evidence.py").write_text("PATTERNS = []\n")
    (root / "repo/tests/test_tools.py").write_text(AGENT_TEST)
    (root / "problem.md").write_text(instructions)


def material(root: Path) -> None:
    (root / "material/failures").mkdir(parents=True)
    (root / "material/README.md").write_text("How the agent failed.")
    (root / "material/failures/01-calc.md").write_text("calc: the tests still fail")
    runs = [
        {
            "task": "t1",
            "outcome": "fail",
            "status": "limits",
            "edited": False,
            "prompt": "Task: fix f",
            "turns": [
                {
                    "reply": "```bash\npython x.py\n```",
                    "output": "bash: python: command not found\n[exit code 127]",
                    "cut": True,
                    "saw_previous": False,
                }
            ],
        },
        {
            "task": "t2",
            "outcome": "pass",
            "edited": True,
            "prompt": "Checks: `pytest` ->\nok",
            "turns": [{"reply": "I am done.", "output": "[exit code 1]"}, "not a turn"],
        },
        "not a run",
    ]
    (root / "material/conversations.jsonl").write_text("\n".join(map(json.dumps, runs)) + '\n{"cut')


REPLACE = (
    "Fix it.\n```replace calc.py\n<<<<<<< SEARCH\n    return a - b\n=======\n    return a + b\n"
    ">>>>>>> REPLACE\n```"
)
SOLVE = ["solve", "--workdir", "repo", "--problem", "problem.md"]
IMPROVE = ["improve", "--workdir", "repo", "--instructions", "problem.md"]
TARGET = "Target: agent/tools.py:Workspace.bash\n\nChange to make: run python as python3.\n\n"
NO_TARGET = "Problem: p\n\nChange agent/tools.py."
TARGET_SHOWN = TARGET + "--- agent/tools.py:Workspace.bash (the target, as it stands) ---"
LINES_SHOWN = TARGET + "The lines that decide it (agent/tools.py, lines 4):\nLIMIT = 400\n"
WHOLE_CLASS = (
    "```python\nclass Workspace:\n    def __init__(self, root):\n        pass\n\n"
    '    def bash(self, command):\n        return "python3 " + command\n\n'
    "    def helper(self):\n        return 1\n```"
)
DIAGNOSE = ["diagnose", "--material", "material", "--out", "out.md"]
SCENARIOS = {
    "a replace that passes": (calc_repo, SOLVE, [REPLACE], {}),
    "every action and error on one task": (
        calc_repo,
        [*SOLVE, "--budget-steps", "12"],
        [
            "Let me look.\n```bash\nls\ncat calc.py\n```",
            "I think the task is done",  # a bare "done" while the check fails: refused once
            "```write data\nx\n```",  # a directory as the path
            "```write ../outside.py\nx\n```",
            "```replace calc.py\n<<<<<<< SEARCH\nreturn nothing\n=======\nx\n>>>>>>> REPLACE\n```",
            "```replace calc.py\nno markers\n```",
            "Each reply: one fenced block, ```bash or ```done when the task is solved.",
            "```sh\necho hi\n```",
            "```python\ndef add(a, b):\n    return a * b + 1\n```",  # no path: the file that defines add
            "```replace calc.py\n<<<<<<< SEARCH\nreturn a - b\n=======\nreturn a - b\n>>>>>>> REPLACE\n```",
            "```python calc.py\nreturn a + b\n```",  # a line most like one of the file's
            "```done\n```",
        ],
        {},
    ),
    "a stub with doctests and the nudge": (
        doctest_repo,
        [*SOLVE, "--budget-steps", "4"],
        [
            "```bash\npython3 -m doctest solution.py\n```",
            "```python\ndef one():\n    '''\n    >>> one()\n    1\n    '''\n    return 1\n```",
        ],
        {},
    ),
    "a long conversation cut to its context": (
        plain_repo,
        [*SOLVE, "--budget-steps", "5"],
        [
            "```bash\nseq 1 400\n```",
            "```bash\nseq 1 300\n```",
            "```write main.py\nprint('hello')\n```",
            "```bash\nseq 1 200\n```",
        ],
        {"EVOLVE_CONTEXT_CHARS": "2500"},
    ),
    "a failing gateway": (plain_repo, SOLVE, [[503, ""], "```bash\ntrue\n```", [400, ""]], {}),
    "improve shows the agent and retries hotter": (
        lambda root: agent_repo(root, NO_TARGET),
        IMPROVE,
        [
            "```python agent/tools.py\ndef cap(text):\n    return text[:LIMIT]\n```",
            "```python agent/tools.py\nLIMIT = 4000\n```",
        ],
        {},
    ),
    "improve merges the target out of a whole class": (
        lambda root: agent_repo(root, TARGET_SHOWN),
        IMPROVE,
        [WHOLE_CLASS, "```done\n```", "```done\n```"],
        {},
    ),
    "improve asked for the lines that decide it": (
        lambda root: agent_repo(root, LINES_SHOWN),
        IMPROVE,
        ["```python agent/tools.py\nLIMIT = 4000\n```"],
        {},
    ),
    "diagnose counts the recorded failures": (material, DIAGNOSE, ["Target: agent/tools.py:cap"], {}),
    "diagnose with a failing gateway": (material, DIAGNOSE, [[400, ""]], {}),
    "bad arguments": (plain_repo, ["solve", "--workdir", "repo"], [], {}),
}


def replay(seed: Path, root: Path, name: str) -> dict:
    """One scenario in a fresh copy of its files at `root`: what the seed at `seed` sent, wrote and said."""
    setup, argv, replies, env = SCENARIOS[name]
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir()
    setup(root)
    argv = [str(root / a) if (root / a).exists() or a == "out.md" else a for a in argv]
    scenario = {
        "socket": str(root / "llm.sock"),
        "argv": [*argv, "--transcript", str(root / "t.jsonl")],
        "replies": [r if isinstance(r, list) else [200, r] for r in replies],
        "env": {"EVOLVE_LLM_SOCKET": str(root / "llm.sock"), "EVOLVE_CONTEXT_CHARS": "200000", **env},
        "unset": ["EVOLVE_LLM_URL", "EVOLVE_TRANSCRIPT", "EVOLVE_TEMPERATURE"],
    }
    if name == "bad arguments":
        scenario["argv"] = argv
    environ = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    command = [sys.executable, "-c", DRIVER, str(seed), json.dumps(scenario)]
    done = subprocess.run(
        command, cwd=root, env=environ, capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.splitlines()[-1])
    own_map = result.pop("own_map")
    for _, body in result["requests"]:  # diagnose shows the running agent's own map: the part that differs
        for message in body["messages"]:
            message["content"] = message["content"].replace(own_map, "<the agent's own map>")
    transcript = root / "t.jsonl"
    records = []
    if transcript.exists():
        records = [json.loads(line) for line in transcript.read_text().splitlines()]
    for record in records:
        record.pop("time")
        if "content" in record:
            record["content"] = record["content"].replace(own_map, "<the agent's own map>")
    result["transcript"] = records
    written = [p for p in sorted(root.rglob("*")) if p.is_file() and p.name not in ("t.jsonl", "llm.sock")]
    result["files"] = {
        p.relative_to(root).as_posix(): p.read_text(errors="replace")
        for p in written
        if "__pycache__" not in p.parts
    }
    return result


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_the_rewritten_seed_replays_the_old_seeds_conversation(tmp_path: Path, name: str) -> None:
    before = replay(OLD, tmp_path / "w", name)
    after = replay(NEW, tmp_path / "w", name)
    assert before["requests"] or name == "bad arguments", before  # the scenario reached the model
    for part in ("exit", "raised", "stdout", "requests", "transcript", "files"):
        assert after.get(part) == before.get(part), part


def test_both_seeds_map_the_same_code_alike(tmp_path: Path) -> None:
    """diagnose's map of the agent's own code, computed by each seed over the same files."""
    script = (
        "import sys; sys.path.insert(0, sys.argv[1]); from pathlib import Path\n"
        "from agent.evidence import agent_map; print(agent_map(Path(sys.argv[2])))"
    )
    environ = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    maps = []
    for seed in (OLD, NEW):
        for root in (OLD, NEW):
            command = [sys.executable, "-c", script, str(seed), str(root)]
            done = subprocess.run(command, capture_output=True, text=True, check=True, env=environ)
            maps.append(done.stdout)
    assert maps[0] == maps[2] and maps[1] == maps[3] and "agent/loop.py:Agent.run  [lines " in maps[1]
