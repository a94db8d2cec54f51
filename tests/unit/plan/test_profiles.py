"""How the plan measures one job's usage from earlier runs."""

from __future__ import annotations

from pathlib import Path

from evolve.plan.profiles import _spread


def test_record_files_are_sampled_evenly_when_a_run_has_many():
    paths = [Path(f"job-{i}.jsonl") for i in range(1000)]
    sample = _spread(paths, 200)
    assert len(sample) == 200 and sample[0] == paths[0] and sample[-1] == paths[995]
    assert _spread(paths[:15], 200) == paths[:15]
