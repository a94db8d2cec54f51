"""Typed access to parsed configuration, with ${section:key} references."""

import re

from inifile.parser import parse
from inifile.values import as_bool, as_int, as_list

REFERENCE = re.compile(r"\$\{(?:([^:}]+):)?([^}]+)\}")


class InterpolationError(ValueError):
    """A ${...} reference names a missing key or refers back to itself."""


class Config:
    def __init__(self, data: dict[str, dict[str, str]]) -> None:
        self.data = data

    @classmethod
    def from_text(cls, text: str) -> "Config":
        return cls(parse(text))

    def raw(self, section: str, key: str) -> str | None:
        """The value as written, looked up in `section` then in DEFAULT."""
        for name in (section, "DEFAULT"):
            value = self.data.get(name, {}).get(key.lower())
            if value is not None:
                return value
        return None

    def get(self, section: str, key: str, default: str | None = None) -> str | None:
        """The value with ${key} (same section) and ${section:key} references replaced."""
        value = self.raw(section, key)
        if value is None:
            return default
        return value

    def getint(self, section: str, key: str, default: int | None = None) -> int | None:
        value = self.get(section, key)
        return default if value is None else as_int(value)

    def getbool(self, section: str, key: str, default: bool | None = None) -> bool | None:
        value = self.get(section, key)
        return default if value is None else as_bool(value)

    def getlist(self, section: str, key: str) -> list[str]:
        value = self.get(section, key)
        return [] if value is None else as_list(value)
