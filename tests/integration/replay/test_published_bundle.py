"""The reference lineage in archive/published/ (the project's own quickstart run) replays:
every node's code rebuilds to its recorded tree hash, and every recorded evaluation re-runs from its
recorded model exchanges (no model) with the outcome it had."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from evolve.notebook import REFERENCE_BUNDLE

PUBLISHED = Path(__file__).resolve().parents[3] / "archive" / "published"
REFERENCE = PUBLISHED / REFERENCE_BUNDLE


@pytest.fixture(scope="module")
def report(base_image):
    out = subprocess.run(
        [sys.executable, "-m", "evolve", "replay", str(REFERENCE), "--rerun", "--json"],
        capture_output=True,
        text=True,
        check=False,
        timeout=1800,
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_every_node_of_the_reference_lineage_is_verified(report):
    assert report["verified"] == report["nodes"] >= 4


def test_every_recorded_evaluation_reruns_with_its_recorded_outcome(report):
    evaluated = [node for node in report["rerun"] if node["compared"]]
    assert len(evaluated) >= 3  # the root and at least two children have results
    for node in report["rerun"]:
        assert node["skipped"] == [], node
        assert node["matching"] == node["compared"], node["mismatches"]
