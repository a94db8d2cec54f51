"""Run configurations that ship with evolve (the quickstart)."""

from pathlib import Path


def config_path(name: str) -> Path:
    """The path of a shipped configuration, e.g. `config_path("quickstart")`."""
    return Path(__file__).with_name(f"{name}.toml")
