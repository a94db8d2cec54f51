"""Seeded sampling end to end: two runs of one config on one embedded llama.cpp server
record the same outcomes and the same model responses.

Each is the smallest real run: one dev task, an evaluation budget of 1 (the root is evaluated, no
expansion), the held-out score of one task, short answers. Concurrency 1, so jobs get the same ids and
the gateway gives each request the same seed (hash of run seed, job, request number). The temperature
is the default (0.2), not 0: without the seed the two runs could differ.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from evolve.config import parse_config
from evolve.llm.exchanges import read_exchanges

CONFIG = """
[run]
name = "{name}"
seed = 11
archive_dir = "{archive}"

[models.solve]
provider = "embedded"
max_tokens = 96

[models.modify]
provider = "embedded"
max_tokens = 96

[models.diagnose]
provider = "embedded"
max_tokens = 96

[sandbox]
backend = "docker"
memory = "1g"
timeout_s = 300

[tasks]
suite = "humaneval"
split = "dev"
limit = 1
heldout_split = "heldout"
heldout_limit = 1

[policy]
name = "hgm"

[budget]
evaluations = 1
agent_steps = 2

[executor]
kind = "local"
concurrency = 1
"""


def _record(run) -> tuple[list, dict]:
    outcomes = [(e.node, e.task, e.split, e.attempt, str(e.outcome)) for e in run.evaluations()]
    responses = {}
    for path in sorted((run.path / "exchanges").glob("job-*.jsonl")):
        responses[path.name] = [
            (x.seq, x.role, x.response.message.content, x.response.finish_reason)
            for x in read_exchanges(path)
        ]
    return outcomes, responses


def test_two_runs_of_one_config_on_one_server_sample_alike(tmp_path: Path, docker_client, base_image):
    pytest.importorskip("llama_cpp", reason="the `local` extra (llama-cpp-python) is not installed")
    from evolve.launch import run_evolution
    from evolve.llm.stack import ModelStack

    configs = [parse_config(CONFIG.format(name=name, archive=tmp_path)) for name in ("first", "second")]
    records = []
    with ModelStack(configs[0].models, seed=configs[0].run.seed) as stack:  # one server for both runs
        for config in configs:
            run, _ = run_evolution(config, models=stack.models)
            with run:
                records.append(_record(run))
    (outcomes, responses), (outcomes_again, responses_again) = records
    assert outcomes and responses, "the runs recorded nothing"
    assert outcomes_again == outcomes
    assert responses_again == responses
