"""The seed agent with the real embedded model: `evolve eval` completes and the transcript shows tool use."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from evolve.cli.app import app


def test_seed_agent_uses_its_tools_on_humaneval(tmp_path, docker_client, base_image):
    pytest.importorskip("llama_cpp", reason="the `local` extra (llama-cpp-python) is not installed")
    result = CliRunner().invoke(
        app,
        [
            "eval",
            "--agent",
            "seed",
            "--suite",
            "humaneval",
            "--task",
            "HumanEval-2",
            "--task",
            "HumanEval-7",
            "--steps",
            "3",
            "--archive",
            str(tmp_path),
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout.strip().splitlines()[-1])
    assert summary["tasks"] == 2 and summary["infra"] == 0, summary
    transcripts = list(Path(summary["run"]).glob("logs/*/transcript.jsonl"))
    assert transcripts
    records = [json.loads(line) for path in transcripts for line in path.read_text().splitlines()]
    replies = [r["content"] for r in records if r.get("role") == "assistant"]
    assert any("```" in reply for reply in replies)  # the model answered in the block protocol
    observations = [r["content"] for r in records if r.get("role") == "user"][1:]
    assert any(o.startswith(("Wrote", "Replaced")) or "[exit code" in o for o in observations) or any(
        r.get("event") == "solved" for r in records
    )  # an action really ran
