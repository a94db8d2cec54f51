"""`evolve models check`: a dry run of exactly what each role would send (no key, server or GPU), and
with --live a round trip on scripted roles."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from evolve.cli import app

MODELS = Path(__file__).resolve().parents[2] / "data" / "models"


def _check(path: Path, *extra: str) -> list[dict]:
    result = CliRunner().invoke(app, ["models", "check", str(path), "--json", *extra])
    assert result.exit_code == 0, result.output
    return [json.loads(line) for line in result.output.splitlines()]


def test_models_check_live_round_trips_every_role(tmp_path):
    config = tmp_path / "run.toml"
    config.write_text(
        "".join(
            f'[models.{role}]\nprovider = "scripted"\nmodel = "s-{role}"\n'
            for role in ("diagnose", "modify", "solve")
        )
    )
    rows = [r for r in _check(config, "--live") if "reply" in r]
    assert [(r["role"], r["model"], r["reply"]) for r in rows] == [
        ("diagnose", "s-diagnose", "ok"),
        ("modify", "s-modify", "ok"),
        ("solve", "s-solve", "ok"),
    ]


def test_an_anthropic_config_shows_the_messages_call_and_the_missing_key(monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    diagnose, _, solve = _check(MODELS / "anthropic.toml")
    assert solve["call"] == "anthropic.Anthropic().messages.create"
    arguments = solve["arguments"]
    assert arguments["model"] == "claude-3-5-sonnet-20241022" and arguments["max_tokens"] == 1024
    assert arguments["system"] == "You are a coding agent." and arguments["tool_choice"] == {"type": "auto"}
    assert "temperature" not in arguments
    assert solve["missing"] == ["the API key variable ANTHROPIC_API_KEY is not set on this host"]
    assert diagnose["price_per_mtok"]["input"] == 3.0


def test_an_openai_reasoning_config_shows_max_completion_tokens_and_no_sampling(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    diagnose, _, solve = _check(MODELS / "openai-reasoning.toml")
    for row in (diagnose, solve):
        assert row["family"] == "openai-reasoning" and row["missing"] == []
        assert row["arguments"]["max_completion_tokens"] == 25_000
        assert not {"temperature", "max_tokens", "stop"} & set(row["arguments"])
    assert solve["retry_window_s"] == 900 and solve["longest_call_s"] == 1500


def test_a_vllm_config_shows_the_server_commands_on_separate_gpus():
    diagnose, modify, solve = _check(MODELS / "vllm.toml")
    assert diagnose["servers"] == solve["servers"]  # one server shared by two roles
    assert [s["CUDA_VISIBLE_DEVICES"] for s in diagnose["servers"] + modify["servers"]] == ["0,1", "2"]
    command = modify["servers"][0]["command"]
    assert command[command.index("--max-model-len") + 1] == "16384" and command[-2:] == [
        "--quantization",
        "awq",
    ]
    assert command[command.index("--tool-call-parser") + 1] == "hermes"
    assert "--tool-call-parser" not in diagnose["servers"][0]["command"]  # Qwen2.5-Coder: none
    assert diagnose["arguments"]["model"] == "coder" and diagnose["arguments"]["max_tokens"] == 1024
    assert diagnose["missing"] == []


def test_the_text_form_prints_the_call_and_what_is_missing(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    result = CliRunner().invoke(app, ["models", "check", str(MODELS / "openai-reasoning.toml")])
    assert result.exit_code == 0, result.output
    assert "openai.OpenAI().chat.completions.create(**{" in result.output
    assert "MISSING: the API key variable OPENAI_API_KEY is not set on this host" in result.output


def test_fetch_embedded_takes_the_models_by_name_from_the_cache(tmp_path, monkeypatch):
    from evolve.llm import embedded
    from evolve.models.catalog import EMBEDDED

    monkeypatch.setattr(embedded, "verify_model", lambda path, spec: None)
    for spec in EMBEDDED.values():  # files already cached (and taken as verified): no download
        path = embedded.cached_path(spec, tmp_path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"GGUF")
    monkeypatch.setenv("EVOLVE_CACHE_DIR", str(tmp_path))
    one = CliRunner().invoke(app, ["models", "fetch-embedded", "--model", "qwen2.5-coder-1.5b-instruct"])
    assert one.exit_code == 0 and one.output.strip().endswith("qwen2.5-coder-1.5b-instruct-q4_k_m.gguf")
    every = CliRunner().invoke(app, ["models", "fetch-embedded", "--all"])
    assert every.exit_code == 0 and len(every.output.splitlines()) == 2
    bad = CliRunner().invoke(app, ["models", "fetch-embedded", "--model", "qwen-7b"])
    assert bad.exit_code == 2 and "'qwen-7b' is no embedded model" in bad.output
