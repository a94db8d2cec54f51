"""The seed's own evidence code (agent/evidence.py, under `[meta] procedure = "agent"`) reads
the conversations the engine writes and finds the patterns the engine's count finds."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

import evolve.seed
from evolve.meta.evidence import conversations_jsonl
from tests.unit.meta.test_evidence import recorded_runs

SEED = Path(evolve.seed.__file__).parent


@pytest.fixture
def seed_evidence(monkeypatch):
    monkeypatch.syspath_prepend(str(SEED))
    for name in [n for n in sys.modules if n == "agent" or n.startswith("agent.")]:
        monkeypatch.delitem(sys.modules, name)
    import agent.evidence

    return agent.evidence


def test_the_agent_counts_the_published_runs_failures_from_the_engines_conversations(seed_evidence, tmp_path):
    (tmp_path / "conversations.jsonl").write_text(conversations_jsonl(recorded_runs(), 400_000))
    text = seed_evidence.evidence(tmp_path / "conversations.jsonl")
    assert text.startswith("Failure patterns, counted by the agent's own code over ")
    assert 'tool error "' in text and "python: command not found" in text
    assert "   usual fix: " in text


def test_a_missing_or_cut_record_gives_a_count_not_a_crash(seed_evidence, tmp_path):
    assert seed_evidence.evidence(tmp_path / "absent.jsonl").endswith("- none found")
    record = {
        "task": "t1",
        "outcome": "fail",
        "status": "limits",
        "edited": False,
        "prompt": "Task: fix f",
        "turns": [
            {"reply": "```bash\nls\n```", "output": "[exit code 2]", "cut": True, "saw_previous": False}
        ],
    }
    (tmp_path / "c.jsonl").write_text(json.dumps(record) + "\n" + json.dumps(record)[:40])
    text = seed_evidence.evidence(tmp_path / "c.jsonl")
    for pattern in (
        "the agent ran out of steps",
        "the agent changed no file",
        "a reply cut off at the token limit",
        "a request that left out the previous step",
        "a failing command shown with only its exit code",
        "no check ran",
    ):
        assert f"{pattern}" in text and "1 tasks (t1)" in text


def test_the_agents_map_names_its_targets_as_the_engine_resolves_them(seed_evidence):
    from evolve.meta.agentmap import agent_map

    found = agent_map(SEED)
    listed = [line.split()[0] for line in seed_evidence.agent_map(SEED).splitlines() if line.startswith("  ")]
    assert "agent/loop.py:Agent.run" in listed and "agent/evidence.py:FIXES" in listed
    assert [name for name in listed if found.resolve(name) != name] == []
