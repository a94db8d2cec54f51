"""A short evolution on real Docker sandboxes with scripted models; the tests SIGKILL and resume it.

Usage (from the repository root): python -m tests.integration.evolution.scripted_evolution ARCHIVE_DIR
[--resume RUN_DIR]
"""

import sys
from pathlib import Path

from evolve.launch import run_evolution
from tests.integration.scripted import evolution_config, scripted_models


def main() -> None:
    archive = Path(sys.argv[1])
    resume = Path(sys.argv[3]) if len(sys.argv) > 3 and sys.argv[2] == "--resume" else None
    config = evolution_config(
        archive,
        "scripted",
        11,
        tasks={"limit": 12, "heldout_limit": 2},
        budget={"evaluations": 40, "agent_steps": 3, "improve_steps": 3, "job_tokens": 50000},
        executor={"concurrency": 2},
    )
    run, outcome = run_evolution(config, resume=resume, models=scripted_models())
    print(f"RUN {run.path}")
    print(f"OUTCOME {outcome}")


if __name__ == "__main__":
    main()
