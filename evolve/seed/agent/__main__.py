"""`python -m agent solve|improve|diagnose ...`: the agent contract."""
import argparse
import os
import sys
from pathlib import Path

from agent.commands import diagnose, improve, solve
from agent.loop import Agent
from agent.model import Model
from agent.tools import Workspace

TEXT_OPTION = {"solve": "--problem", "improve": "--instructions", "diagnose": "--material"}


def parser() -> argparse.ArgumentParser:
    result = argparse.ArgumentParser(prog="agent")
    commands = result.add_subparsers(dest="command", required=True)
    for command, text_option in TEXT_OPTION.items():
        sub = commands.add_parser(command)  # diagnose writes to --out; the others edit --workdir
        directory = "--out" if command == "diagnose" else "--workdir"
        sub.add_argument(directory, dest="workdir", type=Path, required=True)
        sub.add_argument(text_option, dest="text", type=Path, required=True)
        sub.add_argument("--budget-steps", type=int, default=20)
        sub.add_argument("--transcript", type=Path, default=os.environ.get("EVOLVE_TRANSCRIPT"))
    return result


def main(argv: list[str] | None = None) -> int:
    """Exit 0: the agent ran (done or out of steps); 1: the model failed; 2: bad arguments or environment."""
    arguments = parser()
    args = arguments.parse_args(argv)
    socket_path = os.environ.get("EVOLVE_LLM_SOCKET")
    url = os.environ.get("EVOLVE_LLM_URL")
    if not socket_path and not url:
        arguments.error("neither EVOLVE_LLM_SOCKET nor EVOLVE_LLM_URL is set")  # exits 2
    model = Model(socket_path, url, os.environ.get("EVOLVE_LLM_TOKEN"))
    context_chars = int(os.environ.get("EVOLVE_CONTEXT_CHARS", "26000"))
    agent = Agent(model, Workspace(args.workdir.resolve()), args.budget_steps, args.transcript, context_chars)
    if args.command == "diagnose":
        status = diagnose(agent, args.text, args.workdir)
    elif args.command == "solve":
        status = solve(agent, args.text.read_text())
    else:
        status = improve(agent, args.text.read_text())
    why = f" ({agent.error[:300]})" if agent.error else ""
    print(f"agent: {status} after {agent.steps} steps, {agent.workspace.edits} edits{why}")
    return 1 if status == "model_error" else 0


if __name__ == "__main__":
    sys.exit(main())
