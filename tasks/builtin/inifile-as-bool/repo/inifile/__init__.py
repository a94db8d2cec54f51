"""inifile: read and write INI configuration."""

from inifile.config import Config, InterpolationError
from inifile.parser import ParseError, parse
from inifile.writer import dumps

__all__ = ["Config", "InterpolationError", "ParseError", "parse", "dumps"]
