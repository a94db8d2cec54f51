"""`python -m agent solve|improve|diagnose ...`: the agent contract."""
import argparse
import os
import sys
from pathlib import Path

from agent.commands import diagnose, improve, solve
from agent.loop import Agent, Model, Workspace


def main(argv: list[str] | None = None) -> int:
    """Exit 0: the agent ran (done or out of steps); 1: the model failed; 2: bad arguments or environment."""
    parser = argparse.ArgumentParser(prog="agent")
    sub = parser.add_subparsers(dest="command", required=True)
    for cmd, text in (("solve", "--problem"), ("improve", "--instructions"), ("diagnose", "--material")):
        p = sub.add_parser(cmd)  # diagnose writes to --out; the others edit --workdir
        p.add_argument("--out" if cmd == "diagnose" else "--workdir", dest="workdir", type=Path, required=True)
        p.add_argument(text, dest="text", type=Path, required=True)
        p.add_argument("--budget-steps", type=int, default=20)
        p.add_argument("--transcript", type=Path, default=os.environ.get("EVOLVE_TRANSCRIPT"))
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    env = os.environ.get
    if not env("EVOLVE_LLM_SOCKET") and not env("EVOLVE_LLM_URL"):
        parser.error("neither EVOLVE_LLM_SOCKET nor EVOLVE_LLM_URL is set")  # exits 2
    model = Model(env("EVOLVE_LLM_SOCKET"), env("EVOLVE_LLM_URL"), env("EVOLVE_LLM_TOKEN"))
    agent = Agent(model, Workspace(args.workdir.resolve()), args.budget_steps, args.transcript,
                  int(env("EVOLVE_CONTEXT_CHARS", "26000")))
    status = (diagnose(agent, args.text, args.workdir) if args.command == "diagnose"
              else (solve if args.command == "solve" else improve)(agent, args.text.read_text()))
    why = f" ({agent.error[:300]})" if agent.error else ""
    print(f"agent: {status} after {agent.steps} steps, {agent.workspace.edits} edits{why}")
    return 1 if status == "model_error" else 0


if __name__ == "__main__":
    sys.exit(main())
