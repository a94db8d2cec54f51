"""The generated reference pages name every configuration key and every command, from the code."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import typer
from pydantic import BaseModel

from evolve.cli.app import app
from evolve.config import RunConfig
from evolve.docs import cli_reference, config_reference

ROOT = Path(__file__).parents[3]


def _tables(model: type[BaseModel], prefix: str) -> list[tuple[str, type[BaseModel]]]:
    found = [(prefix, model)]
    for name, field in model.model_fields.items():
        if isinstance(field.annotation, type) and issubclass(field.annotation, BaseModel):
            found += _tables(field.annotation, f"{prefix}.{name}" if prefix else name)
    return found


def test_every_table_and_key_of_the_configuration_is_documented_with_its_docstring():
    page = config_reference()
    for table, model in _tables(RunConfig, "")[1:]:
        section = page.split(f"## `[{table}]`\n", 1)[1].split("\n## ", 1)[0]
        for key in model.model_fields:
            assert f"| `{key}` |" in section, f"[{table}] {key}"
    assert "| `evaluations` | `int` | `800` | > `0` | Task evaluations (the policy's B). |" in page


def _commands(command, path: str) -> list[str]:
    if hasattr(command, "commands"):
        return [c for name, sub in command.commands.items() for c in _commands(sub, f"{path} {name}")]
    return [path]


def test_every_command_is_documented_with_its_options():
    page = cli_reference()
    commands = _commands(typer.main.get_command(app), "evolve")
    assert len(commands) > 20
    for command in commands:
        assert f"## `{command}`" in page, command
    assert "| `--without-logs` | flag | `False` |" in page and "| `--split` | str |" in page


@pytest.mark.skipif(
    shutil.which("mkdocs") is None
    and subprocess.run([sys.executable, "-c", "import mkdocs"], capture_output=True, check=False).returncode
    != 0,
    reason="mkdocs is not installed (pip install -e '.[docs]'; .ci/run builds the site)",
)
def test_the_site_builds_strictly(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
