"""The README stays short and points at pages that exist; its guarantees summary names every guarantee
the full account in docs/guarantees.md holds; the two set-up commands and the test command are there
exactly."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from typer.testing import CliRunner

from evolve.archive import import_bundle
from evolve.cli.app import app
from evolve.config import parse_config

ROOT = Path(__file__).parents[3]
README = (ROOT / "README.md").read_text()
RUN_ID = re.compile(r"\([0-9a-f]{12}\)")
"""A run's id, new on every import."""


def test_the_readme_is_at_most_300_lines():
    assert len(README.splitlines()) <= 300


def test_the_two_commands_and_the_test_command_are_there_as_ci_runs_them():
    assert "bash scripts/setup.sh && evolve quickstart" in README and "bash .ci/run" in README
    assert "python3 -m pytest -q" in README and "python3 -m pytest -q" in (ROOT / ".ci" / "run").read_text()


def test_every_page_the_readme_links_exists_and_is_in_the_site():
    nav = (ROOT / "mkdocs.yml").read_text()
    for target in re.findall(r"\]\((docs/[^)#]+)", README):
        assert (ROOT / target).is_file(), target
        if target.endswith(".md"):
            assert Path(target).name in nav, f"{target} is not in mkdocs.yml's nav"


def test_the_guarantees_summary_names_every_guarantee_of_the_full_account():
    full = (ROOT / "docs" / "guarantees.md").read_text()
    summary = README.split("## What an agent cannot do", 1)[1].split("\n## ", 1)[0]
    titles = re.findall(r"^- \*\*(.+?)\*\*", full, re.MULTILINE)
    assert len(titles) >= 7
    for title in titles:
        assert f"- **{title.rstrip('.')}" in summary, title


def test_the_tracking_section_s_config_parses_and_its_commands_write_what_datasets_loads(tmp_path):
    datasets = pytest.importorskip("datasets", reason="the tracking extra: pip install 'evolve[tracking]'")
    section = README.split("## Trackers and fine-tuning traces", 1)[1].split("\n## ", 1)[0]
    (toml,) = re.findall(r"```toml\n(.*?)```", section, re.DOTALL)
    assert parse_config(toml).tracking.wandb.enabled
    (bash,) = re.findall(r"```bash\n(.*?)```", section, re.DOTALL)
    import_bundle(ROOT / "archive" / "published" / "humaneval-cpu.evolve.tar.gz", tmp_path / "cpu").close()
    commands = [line.split("#", 1)[0].replace("/tmp/", f"{tmp_path}/") for line in bash.splitlines()]
    assert len(commands) == 2
    for command in commands:
        words = shlex.split(command)
        assert words[:2] == ["evolve", "export-traces"]
        result = CliRunner().invoke(app, words[1:])
        assert result.exit_code == 0, result.output
    solves = datasets.load_dataset("json", data_files=str(tmp_path / "solves.jsonl"), split="train")
    assert len(solves) > 0 and set(solves["outcome"]) == {"pass"}
    assert "heldout" not in set(datasets.load_from_disk(str(tmp_path / "traces"))["split"])


def test_the_tour_s_commands_run_on_the_published_bundle_and_print_what_the_readme_shows(tmp_path):
    section = README.split("## A five-minute tour", 1)[1].split("\n## ", 1)[0]
    (bash,) = re.findall(r"```bash\n(.*?)```", section, re.DOTALL)
    (shown,) = re.findall(r"```text\n(.*?)```", section, re.DOTALL)
    printed = {}
    for line in bash.splitlines():
        words = shlex.split(line.split("#", 1)[0].replace("/tmp/", f"{tmp_path}/"))
        assert words[0] == "evolve", line
        result = CliRunner().invoke(app, words[1:], env={"COLUMNS": "200"})
        assert result.exit_code == 0, f"{line}\n{result.output}"
        printed[" ".join(words[1:3])] = result.output
    assert (tmp_path / "cpu" / "report.html").is_file()
    for block in shown.split("$ evolve ")[1:]:
        command, *lines = block.replace("/tmp/", f"{tmp_path}/").rstrip("\n").splitlines()
        output = RUN_ID.sub("(ID)", printed[" ".join(command.split()[:2])])
        for expected in lines:  # a line the README cuts with "..." is checked up to the cut
            shown_part = RUN_ID.sub("(ID)", expected).split("...", 1)[0]
            assert shown_part in output, f"{command}: {expected!r} not in\n{output}"


def test_every_file_the_iteration_sketch_names_is_one_the_engine_writes():
    section = README.split("## One iteration", 1)[1].split("\n## ", 1)[0]
    (sketch,) = re.findall(r"```text\n(.*?)```", section, re.DOTALL)
    after = section.split("```", 2)[2].strip().split("\n\n", 1)[0]  # the paragraph under the sketch
    names = set(re.findall(r"(?<![/\w-])[\w-]+\.(?:md|json|jsonl|log|patch|sqlite)\b", sketch + after))
    assert {
        "instructions.md",
        "instructions.json",
        "diff.patch",
        "attempts.jsonl",
        "candidates.jsonl",
    } <= names
    source = "".join(p.read_text() for p in (ROOT / "evolve").rglob("*.py") if "seed" not in p.parts)
    for name in names:
        stem, suffix = name.rsplit(".", 1)
        assert f'"{name}"' in source or f'{stem}{{suffix}}.{suffix}"' in source, name
