"""A short evolution on real Docker sandboxes with scripted models; the tests SIGKILL and resume it.

Usage: scripted_evolution.py ARCHIVE_DIR [--resume RUN_DIR]
"""

import sys
from pathlib import Path

from evolve.config import parse_config
from evolve.engine.launch import run_evolution
from evolve.meta.validate import SMOKE_STATEMENT
from evolve.standins.models import RoutedModel

CONFIG = """
[run]
name = "scripted"
seed = 11
archive_dir = "{archive}"

[sandbox]
memory = "512m"
timeout_s = 120

[tasks]
suite = "humaneval"
limit = 12
heldout_limit = 2

[budget]
evaluations = 40
agent_steps = 3
improve_steps = 3
job_tokens = 50000

[executor]
concurrency = 2
"""

# diagnose: a usable instruction; modify: one real edit of the agent's own code, then done;
# solve: give up at once (every task fails, which is a fine signal for the machinery).
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
    archive = Path(sys.argv[1])
    resume = Path(sys.argv[3]) if len(sys.argv) > 3 and sys.argv[2] == "--resume" else None
    config = parse_config(CONFIG.format(archive=archive))
    run, outcome = run_evolution(config, resume=resume, models=MODELS)
    print(f"RUN {run.path}")
    print(f"OUTCOME {outcome}")


if __name__ == "__main__":
    main()
