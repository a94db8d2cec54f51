"""A short evolution whose jobs run on a Ray cluster (Docker sandboxes on its nodes, scripted models).

Usage: ray_evolution.py ARCHIVE_DIR RAY_ADDRESS
"""

import sys
from pathlib import Path

from evolve.config import parse_config
from evolve.engine.launch import run_evolution
from evolve.meta.validate import SMOKE_STATEMENT
from evolve.standins.models import RoutedModel

CONFIG = """
[run]
name = "on-ray"
seed = 5
archive_dir = "{archive}"

[sandbox]
memory = "512m"
timeout_s = 120

[tasks]
suite = "humaneval"
limit = 6
heldout_limit = 1

[budget]
evaluations = 8
agent_steps = 3
improve_steps = 3
job_tokens = 50000

[executor]
kind = "ray"
ray_address = "{address}"
concurrency = 3
"""

# As in tests/integration/evolution: diagnose gives a usable instruction, modify makes one real
# edit of the agent's own code, solve gives up at once (every task fails).
# The gate's smoke task gets one real edit (the gate's contract checks need a model request and a change).
SMOKE_MARKER = SMOKE_STATEMENT.strip()[:40]
SMOKE_EDIT = "```bash\nsed -i 's/raise NotImplementedError/return \"Hello, \" + name + \"!\"/' greet.py\n```"
MODELS = {
    "diagnose": RoutedModel([], '```json\n{"problem": "p", "cause": "c", "change": "note the attempt", '
                                '"files": ["agent/prompts.py"]}\n```'),
    "modify": RoutedModel([("What to improve:", ("Adding a note.\n```bash\necho \"# note $(date +%s%N)\" >> "
                                             "agent/prompts.py\n```"))], "```done\n```"),
    "solve": RoutedModel([(SMOKE_MARKER, SMOKE_EDIT)], "```done\n```"),
}


def main() -> None:
    config = parse_config(CONFIG.format(archive=Path(sys.argv[1]), address=sys.argv[2]))
    run, outcome = run_evolution(config, models=MODELS)
    print(f"RUN {run.path}")
    print(f"OUTCOME {outcome}")


if __name__ == "__main__":
    main()
