"""The layering contract (pyproject.toml's [tool.importlinter], checked by `lint-imports` in .ci/run) places
every top-level module of the package: a module it does not name would be bound by no layer."""

from __future__ import annotations

import pkgutil
import tomllib
from pathlib import Path

import evolve

ROOT = Path(__file__).resolve().parents[3]
UNLAYERED = {"configs"}
"""Packages that hold data only (TOML files), no code that imports."""


def _contract() -> dict:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    return next(c for c in config["contracts"] if c["type"] == "layers")


def test_every_top_level_module_sits_in_a_layer():
    named = {
        name.strip().removeprefix("evolve.")
        for layer in _contract()["layers"]
        for name in layer.replace("|", ":").split(":")
    }
    modules = {m.name for m in pkgutil.iter_modules(evolve.__path__)} - UNLAYERED
    assert modules - named == set(), "add these to a layer in pyproject.toml"
    assert named - modules == set(), "these layers name no module"


def test_the_layers_run_from_the_commands_down_to_the_config():
    layers = _contract()["layers"]
    assert layers[1].startswith("evolve.cli") and "evolve.config" in layers[-1]
