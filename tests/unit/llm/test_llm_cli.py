"""`evolve models check` on scripted roles (no server needed)."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from evolve.cli import app


def test_models_check_round_trips_every_role(tmp_path):
    config = tmp_path / "run.toml"
    config.write_text(
        "".join(
            f'[models.{role}]\nprovider = "scripted"\nmodel = "s-{role}"\n'
            for role in ("diagnose", "modify", "solve")
        )
    )
    result = CliRunner().invoke(app, ["models", "check", str(config), "--json"])
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in result.output.splitlines()]
    assert [(r["role"], r["model"], r["reply"]) for r in rows] == [
        ("diagnose", "s-diagnose", "ok"),
        ("modify", "s-modify", "ok"),
        ("solve", "s-solve", "ok"),
    ]
