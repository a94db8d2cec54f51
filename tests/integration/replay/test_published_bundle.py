"""The lineages in archive/published/ are what their README says: each bundle verifies against the
digest published beside it, and the reference lineage (the project's own quickstart run) replays:
every node's code rebuilds to its recorded tree hash, and every recorded evaluation re-runs from its
recorded model exchanges (no model) with the outcome it had."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

PUBLISHED = Path(__file__).resolve().parents[3] / "archive" / "published"
REFERENCE = PUBLISHED / "quickstart-embedded.evolve.tar.gz"
# The README's check command for each bundle: `evolve replay archive/published/NAME \ --expect sha256:...`.
_CHECK = re.compile(r"evolve replay archive/published/(\S+\.evolve\.tar\.gz)\s*\\?\s*--expect (sha256:[0-9a-f]{64})")


def test_every_published_bundle_verifies_against_the_digest_its_readme_publishes():
    published = dict(_CHECK.findall((PUBLISHED / "README.md").read_text()))
    assert sorted(published) == sorted(path.name for path in PUBLISHED.glob("*.evolve.tar.gz"))
    for name, digest in published.items():
        out = subprocess.run([sys.executable, "-m", "evolve", "replay", str(PUBLISHED / name), "--expect", digest,
                              "--json"], capture_output=True, text=True, check=False, timeout=600)
        assert out.returncode == 0, f"{name}: {out.stderr}"
        report = json.loads(out.stdout)
        assert report["verified"] == report["nodes"] > 0, name


@pytest.fixture(scope="module")
def report(base_image):
    out = subprocess.run(
        [sys.executable, "-m", "evolve", "replay", str(REFERENCE), "--rerun", "--json"],
        capture_output=True, text=True, check=False, timeout=1800,
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
