"""What the integration tests' scripted evolutions share: a short run's config and the scripted models.

Everything else in those runs is real (Docker sandboxes, the gateway, the seed agent, the gate); only
the models are stand-ins (evolve/standins/models.py).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType

from evolve.config import RunConfig, parse_config
from evolve.meta.validate import SMOKE_FIX
from evolve.standins.models import SMOKE_MARKER, RoutedModel

DONE = "```done\n```"
NOTE_EDIT = 'Adding a note.\n```bash\necho "NOTE = $(date +%s%N)  # note" >> agent/prompts.py\n```'
"""One real edit of the agent's own code (a fresh line each time, so every child differs)."""
SMOKE_EDIT = f"```bash\n{SMOKE_FIX}\n```"
"""The gate's smoke task solved: its contract checks need a model request and a change."""

Table = Mapping[str, object]
TWO_TASKS: Table = MappingProxyType({"limit": 2, "heldout_limit": 1})
"""Two humaneval tasks: one dev, one held out."""
ONE_EXPANSION: Table = MappingProxyType(
    {"evaluations": 3, "expansions": 1, "agent_steps": 2, "improve_steps": 3}
)
"""The smallest budget that grows a tree: the seed, one child, their evaluations."""


def diagnosis(
    files: tuple[str, ...] = ("agent/prompts.py",), change: str = "note each attempt in the prompt"
) -> str:
    """A usable diagnose reply in the engine's schema (its target: the first file, a target of the map)."""
    target = files[0] if files else "agent/prompts.py"
    reply = {"target": target, "problem": "p", "cause": "c", "change": change, "files": list(files)}
    return "```json\n" + json.dumps(reply) + "\n```"


def give_up() -> RoutedModel:
    """A model that ends every job at once (every task fails: a fine signal for the machinery)."""
    return RoutedModel([], DONE)


def scripted_models(**roles: RoutedModel) -> dict[str, RoutedModel]:
    """diagnose: a usable instruction; modify: one real edit of the agent's own code, then done; solve:
    the gate's smoke task gets its real edit, any other task is given up at once. `roles` replace these."""
    return {
        "diagnose": RoutedModel([], diagnosis()),
        "modify": RoutedModel([("What to improve:", NOTE_EDIT)], DONE),
        "solve": RoutedModel([(SMOKE_MARKER, SMOKE_EDIT)], DONE),
        **roles,
    }


def evolution_config(archive: Path, name: str, run_seed: int, **sections: Table) -> RunConfig:
    """A short run's config: humaneval on 512m sandboxes with 120 s jobs; each of `sections` adds to (or
    overrides, key by key) the table of its name; a nested dict is a subtable (`policy={"gea": {...}}`)."""
    tables: dict[str, Table] = {
        "run": {"name": name, "seed": run_seed, "archive_dir": str(archive)},
        "sandbox": {"memory": "512m", "timeout_s": 120},
        "tasks": {"suite": "humaneval"},
    }
    for section, values in sections.items():
        tables[section] = {**tables.get(section, {}), **values}
    return parse_config(_toml(tables))


def _toml(tables: Mapping[str, object], prefix: str = "") -> str:
    lines: list[str] = []
    for name, table in tables.items():
        assert isinstance(table, Mapping)
        lines.append(f"[{prefix}{name}]")  # JSON's strings, numbers and lists are TOML's too
        lines += [
            f"{key} = {json.dumps(value)}" for key, value in table.items() if not isinstance(value, Mapping)
        ]
        subtables = {key: value for key, value in table.items() if isinstance(value, Mapping)}
        if subtables:
            lines.append(_toml(subtables, f"{prefix}{name}."))
    return "\n".join(lines)


def assert_clades_recount(run, dev: list) -> None:
    """Each node's clade counts equal a recount of the graded `dev` evaluations of its clade."""
    tree = run.tree()
    for node in run.nodes():
        members = {node.id, *tree.descendants(node.id)}
        clade = tree.clade_counts(node.id)
        assert clade.successes == sum(e.outcome == "pass" for e in dev if e.node in members)
        assert clade.failures == sum(e.outcome != "pass" for e in dev if e.node in members)
