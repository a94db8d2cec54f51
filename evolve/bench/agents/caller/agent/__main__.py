"""`python -m agent solve|improve|diagnose` (the evolve agent contract) for the tool-calling agent."""
import argparse
import os
import subprocess
import sys
from pathlib import Path

from agent import briefs, gateway
from agent.session import Session


def listing(tree: Path) -> str:
    """The work tree's files, as git knows them (else every file), at most 300 lines."""
    found = subprocess.run(["git", "ls-files"], cwd=tree, capture_output=True, text=True, check=False)
    names = found.stdout.split() if found.returncode == 0 and found.stdout.strip() else sorted(
        str(p.relative_to(tree)) for p in tree.rglob("*") if p.is_file() and ".git" not in p.parts)
    return "\n".join(names[:300])


def triage(material: Path, out: Path) -> int:
    """diagnose: one call over the failure material; its answer is the instructions."""
    room = int(os.environ.get("EVOLVE_CONTEXT_CHARS", "60000")) * 3 // 4
    pages = [f"=== {p.relative_to(material)}\n{p.read_text(errors='replace')}"
             for p in sorted(material.rglob("*")) if p.is_file()]
    try:
        brief = briefs.TRIAGE.format(material="\n".join(pages)[:room])
        answer = gateway.complete([{"role": "user", "content": brief}])
    except gateway.Refused as exc:
        print(f"agent: {exc}", file=sys.stderr)
        return 1
    if not (answer.get("content") or "").strip():
        print("agent: the model's answer was empty", file=sys.stderr)
        return 1
    out.write_text(answer["content"])
    return 0


def main(argv: list[str]) -> int:
    cli = argparse.ArgumentParser(prog="agent")
    cli.add_argument("mode", choices=["solve", "improve", "diagnose"])
    cli.add_argument("--workdir", type=Path)
    cli.add_argument("--problem", "--instructions", dest="statement", type=Path)
    cli.add_argument("--budget-steps", dest="turns", type=int, default=30)
    cli.add_argument("--material", type=Path)
    cli.add_argument("--out", type=Path)
    given = cli.parse_args(argv)
    if given.mode == "diagnose":
        if not (given.material and given.out):
            cli.error("diagnose needs --material DIR and --out FILE")
        return triage(given.material, given.out)
    if not (given.workdir and given.statement):
        cli.error(f"{given.mode} needs --workdir and --problem (or --instructions)")
    tree = given.workdir.resolve()
    record = Path(os.environ["EVOLVE_TRANSCRIPT"]) if os.environ.get("EVOLVE_TRANSCRIPT") else None
    template = briefs.SELF if given.mode == "improve" else briefs.TASK
    opening = template.format(tree=tree, listing=listing(tree), statement=given.statement.read_text())
    ending = Session(tree, given.turns, record).converse(opening)
    print(f"agent: {ending}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
