"""A short evolution whose jobs run on a Ray cluster (Docker sandboxes on its nodes, scripted models).

Usage (from the repository root): python -m tests.integration.cluster.ray_evolution ARCHIVE_DIR RAY_ADDRESS
"""

import sys
from pathlib import Path

from evolve.launch import run_evolution
from tests.integration.scripted import evolution_config, scripted_models


def main() -> None:
    config = evolution_config(
        Path(sys.argv[1]),
        "on-ray",
        5,
        tasks={"limit": 6, "heldout_limit": 1},
        budget={"evaluations": 8, "agent_steps": 3, "improve_steps": 3, "job_tokens": 50000},
        executor={"kind": "ray", "ray_address": sys.argv[2], "concurrency": 3},
    )
    run, outcome = run_evolution(config, models=scripted_models())
    print(f"RUN {run.path}")
    print(f"OUTCOME {outcome}")


if __name__ == "__main__":
    main()
