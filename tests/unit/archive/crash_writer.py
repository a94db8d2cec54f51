"""A writer that adds nodes (and evaluations) forever; the crash test kills it with SIGKILL."""

import sys
from pathlib import Path

from evolve.archive import Run


def main(run_path: str, scratch: str) -> None:
    run = Run.open(run_path, writer=True)
    scratch_dir = Path(scratch)
    parent = run.nodes()[-1].id
    step = 0
    while True:
        code = scratch_dir / f"code-{step}"
        code.mkdir(parents=True)
        (code / "agent.py").write_text(f"step = {step}\n" + "x = 1\n" * (step % 7))
        node = run.add_node(code, parent=parent, origin="self_modify")
        run.record_evaluation(node.id, f"t{step % 5}", "pass" if step % 2 else "fail")
        print(node.id, flush=True)
        parent = node.id if step % 3 else run.nodes()[0].id
        step += 1


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
