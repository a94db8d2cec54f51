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
        return self._expand(section, value, [(section, key.lower())])

    def _expand(self, section: str, value: str, seen: list[tuple[str, str]]) -> str:
        def replace(match: re.Match) -> str:
            ref_section = match.group(1) or section
            ref_key = match.group(2).lower()
            if (ref_section, ref_key) in seen:
                raise InterpolationError(f"circular reference to {ref_section}:{ref_key}")
            raw = self.raw(ref_section, ref_key)
            if raw is None:
                raise InterpolationError(f"no key {ref_key!r} in section {ref_section!r}")
            return self._expand(ref_section, raw, seen + [(ref_section, ref_key)])

        return REFERENCE.sub(replace, value)

    def getint(self, section: str, key: str, default: int | None = None) -> int | None:
        value = self.get(section, key)
        return default if value is None else as_int(value)

    def getbool(self, section: str, key: str, default: bool | None = None) -> bool | None:
        value = self.get(section, key)
        return default if value is None else as_bool(value)

    def getlist(self, section: str, key: str) -> list[str]:
        value = self.get(section, key)
        return [] if value is None else as_list(value)
