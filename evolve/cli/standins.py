"""The stand-in providers the commands accept: `provider = "scripted"` in a config is a model that answers
"ok" to everything (for trying a config's wiring and for tests), served by evolve.standins. The engine and
the model stack know no stand-in; the commands hand these to the stack."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from evolve.config import ModelConfig
from evolve.llm.client import ChatModel
from evolve.llm.stack import ClientFactory
from evolve.standins.models import ScriptedModel


def _scripted(config: ModelConfig) -> ChatModel:
    return ScriptedModel(["ok"], name=config.model)


STANDINS: Mapping[str, ClientFactory] = MappingProxyType({"scripted": _scripted})
"""The stand-in providers by name."""
