"""Any agent as a seed: a second, deliberately different agent (tests/data/toolcall-agent: OpenAI tool
calls, one file) passes `evolve agent check`, a hollow one fails naming the check, and a tree grows
from it in a real run (Docker sandboxes, the gateway, the gate) with scripted tool-call models. The bare
seed and the selfrepair bench's `caller` agent pass the check too, `diagnose` included."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import evolve.bench
import evolve.seed
from evolve.launch import run_evolution
from evolve.llm.types import ChatRequest, ChatResponse, Message, ToolCall, Usage
from evolve.meta.validate import SMOKE_FIX
from evolve.standins.models import SMOKE_MARKER, RoutedModel, fake_completion_cap
from tests.integration.scripted import ONE_EXPANSION, TWO_TASKS, diagnosis, evolution_config

pytestmark = pytest.mark.docker
AGENT = Path(__file__).resolve().parents[2] / "data" / "toolcall-agent"
BUNDLED = {
    "bare-seed": Path(evolve.seed.__file__).parents[1] / "seeds" / "bare",
    "caller": Path(evolve.bench.__file__).parent / "agents" / "caller",
}
NOTE = 'echo "NOTE = $(date +%s%N)  # note" >> agent/__main__.py'


class ToolCaller:
    """Answers the task's first message with one `bash` call (by marker), and anything after it with
    `finish`."""

    name = "tool-caller"

    def __init__(self, rules: list[tuple[str, str]]) -> None:
        self.rules = rules

    def completion_cap(self, request: ChatRequest) -> int:
        return fake_completion_cap(request)

    def complete(self, request: ChatRequest) -> ChatResponse:
        first, last = request.messages[0].content or "", request.messages[-1]
        command = next((c for marker, c in self.rules if marker in first), None)
        call = (
            ToolCall(id="c1", name="bash", arguments=json.dumps({"command": command}))
            if command and last.role != "tool"
            else ToolCall(id="c2", name="finish")
        )
        return ChatResponse(
            message=Message(role="assistant", content="", tool_calls=(call,)),
            finish_reason="tool_calls",
            model=self.name,
            usage=Usage(prompt_tokens=len(first.split()), completion_tokens=3),
        )


def check(directory: Path, *options: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "evolve",
            "agent",
            "check",
            str(directory),
            "--scripted",
            "--timeout",
            "60",
            *options,
        ],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def test_agent_check_passes_the_tool_call_agent_and_names_what_a_hollow_one_fails(tmp_path, base_image):
    good = check(AGENT)
    assert good.returncode == 0 and "meets the agent contract" in good.stdout, good.stdout + good.stderr
    hollow = shutil.copytree(AGENT, tmp_path / "hollow", ignore=shutil.ignore_patterns("__pycache__"))
    # its tests still pass; it claims success without asking the model
    main = hollow / "agent" / "__main__.py"
    main.write_text(main.read_text().replace("sys.exit(main(sys.argv[1:]))", "print('agent: finished')"))
    bad = check(hollow)
    assert bad.returncode == 1 and "FAIL model request" in bad.stdout, bad.stdout + bad.stderr
    assert "check 'model request' failed" in bad.stderr


@pytest.mark.parametrize("name", sorted(BUNDLED))
def test_agent_check_passes_the_bundled_agents_diagnose_included(name, tmp_path, base_image):
    config = tmp_path / "agent-procedure.toml"
    config.write_text('[meta]\nprocedure = "agent"\n')
    done = check(BUNDLED[name], "--config", str(config))
    assert done.returncode == 0 and "ok   diagnose" in done.stdout, done.stdout + done.stderr
    assert "meets the agent contract" in done.stdout


def test_a_tree_grows_from_the_tool_call_agent(tmp_path, base_image):
    models = {
        "diagnose": RoutedModel([], diagnosis(files=("agent/__main__.py",))),
        "modify": ToolCaller([("Edit your own code", NOTE)]),
        "solve": ToolCaller([(SMOKE_MARKER, SMOKE_FIX)]),
    }
    config = evolution_config(
        tmp_path,
        "toolcall-seed",
        3,
        seed={"path": str(AGENT)},
        tasks=TWO_TASKS,
        budget=ONE_EXPANSION,
        policy={"name": "greedy"},
    )
    run, outcome = run_evolution(config, models=models)
    root, *children = sorted(run.nodes(), key=lambda n: n.created)
    assert (
        root.origin == "seed"
        and "TOOLS = [" in (run.checkout(root.id, tmp_path / "root") / "agent/__main__.py").read_text()
    )
    assert children and all(child.valid for child in children), (outcome, [c.reason for c in children])
    assert "# note" in run.diff(children[0].id)
    assert run.evaluations(root.id), outcome
