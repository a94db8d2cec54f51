"""`python -m agent solve|improve ...`: the contract between the engine and the agent (DESIGN.md §3)."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from agent import prompts
from agent.improve import improve
from agent.loop import Agent, AgentConfig
from agent.model import GatewayModel, ModelError
from agent.tools import Workspace

CLOSING_FENCE = ("\n```\n",)  # every block of the text protocol opens with a type, so this only closes one


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="agent")
    sub = parser.add_subparsers(dest="command", required=True)
    solve = sub.add_parser("solve", help="edit the repository in --workdir to solve the problem")
    solve.add_argument("--workdir", type=Path, required=True)
    solve.add_argument("--problem", type=Path, required=True)
    solve.add_argument("--budget-steps", type=int, default=20)
    improve = sub.add_parser("improve", help="edit the agent's own code following the instructions")
    improve.add_argument("--workdir", type=Path, required=True)
    improve.add_argument("--instructions", type=Path, required=True)
    improve.add_argument("--budget-steps", type=int, default=30)
    for p in (solve, improve):
        p.add_argument("--transcript", type=Path, default=os.environ.get("EVOLVE_TRANSCRIPT"))
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    try:
        model = GatewayModel.from_env()
    except ModelError as exc:
        print(f"agent: {exc}", file=sys.stderr)
        return 2
    native = os.environ.get("EVOLVE_TOOL_PROTOCOL", "text") == "native"
    if not native:
        model.stop = CLOSING_FENCE
    config = AgentConfig(max_steps=args.budget_steps, native_tools=native,
                         context_chars=int(os.environ.get("EVOLVE_CONTEXT_CHARS", "12000")))
    agent = Agent(model, Workspace(args.workdir.resolve()), config, transcript=args.transcript)
    if args.command == "solve":
        status = agent.run(args.problem.read_text(), prompts.SOLVE)
    else:
        status = improve(agent, args.instructions.read_text())
    why = f" ({agent.last_error[:300]})" if agent.last_error else ""
    print(f"agent: {status} after {agent.steps} steps, {agent.workspace.edits} edits{why}")
    return 0 if status in {"submitted", "limits", "stuck"} else 1


if __name__ == "__main__":
    sys.exit(main())
