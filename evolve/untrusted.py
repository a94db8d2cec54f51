"""Reading what agent code wrote: bounded before it is parsed, typed after, and never an exception.

An agent's transcript, its conversations, the files of its tree, its instructions, the diffs made from
its tree and the exchanges of its model calls are all written by code the engine does not trust
(docs/guarantees.md). The engine reads them on the host to diagnose, replay and report; a reader that
raises on something the agent wrote fails the engine's own job, and a streak of those used to stop the
run as infrastructure failures, so an agent could end a run it was losing. Every such read goes here:

1. size and shape before parsing: a line over `Bounds.line_bytes`, nested deeper than `Bounds.depth`, or
   holding more than `Bounds.values` JSON values (counted on the raw bytes, strings skipped) is refused
   unparsed, so `json.loads` never recurses deep nor builds much;
2. strict values: no NaN or Infinity (as literals or by overflow), integers within 64 bits (refused from
   their digits, before Python converts them); a lone surrogate in a string reads as U+FFFD, so the
   text can be written back out;
3. typed reads: `Record.text("content")` is the field where it is a string and "" otherwise: a field of
   the wrong type reads as missing;
4. the outcome is data: `Lines` holds the records and each skipped line with its reason; a file that is
   missing, unreadable or not a regular file reads as empty.

The gateway's strict reading of an agent's request (evolve.llm.agent_request) shares the shape and value
checks (`shape_problem`, `value_problem`) and refuses where these skip.
"""

from __future__ import annotations

import json
import math
import os
import re
import stat
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from itertools import accumulate, repeat
from pathlib import Path
from types import MappingProxyType

INT64 = 2**63
_STRING = re.compile(rb'"[^"]*+"')
"""A JSON string once its escaped backslashes and quotes are taken out."""
_NOT_BRACKETS = bytes(byte for byte in range(256) if byte not in b"[]{}")
_LEVEL = 2
"""Brackets become bytes `_LEVEL + 1` (opening) and `_LEVEL - 1` (closing), so the steps of the running
sum are made in C."""
_DEPTH_STEP = bytes.maketrans(b"[{]}", bytes([_LEVEL + 1, _LEVEL + 1, _LEVEL - 1, _LEVEL - 1]))
_SURROGATE = re.compile("[\ud800-\udfff]")
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
"""A JSON escape that may decode to a lone surrogate (a pair is joined by the parser)."""


@dataclass(frozen=True)
class Bounds:
    """What one read of agent-written data takes at most."""

    line_bytes: int = 8 << 20
    """One JSON line (or document); a longer one is refused unparsed."""
    depth: int = 64
    """Nesting of arrays and objects."""
    values: int = 1 << 18
    """JSON values and keys in one line."""
    file_bytes: int = 64 << 20
    """A file is read to this many bytes (of its end for JSONL, where the latest lines are)."""


DEFAULT_BOUNDS = Bounds()


@dataclass(frozen=True)
class Refused:
    """Agent-written data that was not parsed, and why (one line)."""

    reason: str


class _Refusal(Exception):
    """Raised by the parser's hooks to stop at a value that is not built; never leaves this module."""


def shape_problem(raw: bytes, *, max_values: int, max_depth: int) -> str | None:
    """Why `raw` is refused before parsing (`nests more than N levels deep`, `holds more than N JSON
    values`), or None.

    In JSON every value but the first follows a `[`, `,` or `:` and every key a `{` or `,`, so their
    count outside strings bounds what `json.loads` would build. Strings are taken out first (escaped
    backslashes, then escaped quotes, then every quoted run; up to the first byte `json.loads` would
    refuse this is exactly its reading), all in C; the nesting is then the running sum of the brackets
    left, at most the first 2 × `max_values` of them: the work stays linear in `raw` and the caps."""
    opens = raw.count(b"[") + raw.count(b"{")
    if opens <= max_depth and opens + raw.count(b",") + raw.count(b":") < max_values:
        return None  # counted with strings, the marks are within both caps
    bare = _STRING.sub(b"", raw.replace(b"\\\\", b"").replace(b'\\"', b""))
    brackets = bare.translate(None, _NOT_BRACKETS)[: 2 * max_values + 2]
    steps = map(int.__sub__, brackets.translate(_DEPTH_STEP), repeat(_LEVEL))  # +1 and -1
    if max(accumulate(steps), default=0) > max_depth:
        return f"nests more than {max_depth} levels deep"
    if bare.count(b"[") + bare.count(b"{") + bare.count(b",") + bare.count(b":") >= max_values:
        return f"holds more than {max_values} JSON values"
    return None


def json_path(path: tuple[str | int, ...]) -> str:
    """A place in parsed JSON as the gateway names it, on one line: `tools[0].function.name`; a key that is
    not a plain name is quoted as JSON, escapes and all, and cut (`messages["\\n"]`)."""
    out = ""
    for step in path:
        if isinstance(step, int):
            out += f"[{step}]"
        elif _PLAIN_KEY.fullmatch(step):
            out += f".{step}" if out else step
        else:
            quoted = json.dumps(step if len(step) <= _KEY_CHARS else step[:_KEY_CHARS] + "...")
            out += f"[{quoted}]"
    return out or "the body"


_PLAIN_KEY = re.compile(r"[A-Za-z0-9_$-]{1,64}")
_KEY_CHARS = 40
"""The characters of an odd key an error line quotes (the key is the agent's: any length, any text)."""


def _text_problem(text: str, path: tuple[str | int, ...]) -> str | None:
    bad = _SURROGATE.search(text)
    if bad is None:
        return None
    code = f"U+{ord(bad.group()):04X}"
    return f"{json_path(path)}: a lone surrogate ({code}) at character {bad.start()} is not valid Unicode"


def value_problem(value: object) -> str | None:
    """Where and why `value` (parsed JSON) holds a lone surrogate, a number that is not finite or an
    integer outside 64 bits (`tools[0].function.description: a lone surrogate ...`), or None."""
    stack: list[tuple[object, tuple[str | int, ...]]] = [(value, ())]
    while stack:
        item, where = stack.pop()
        if isinstance(item, str):
            problem = _text_problem(item, where)
            if problem is not None:
                return problem
        elif isinstance(item, bool) or item is None:
            continue
        elif isinstance(item, int):
            if not -INT64 <= item < INT64:
                return f"{json_path(where)}: the integer is outside 64 bits"
        elif isinstance(item, float):
            if not math.isfinite(item):
                return f"{json_path(where)}: {item} is not a finite number"
        elif isinstance(item, dict):
            for key, inner in item.items():
                problem = _text_problem(key, (*where, key[:40]))
                if problem is not None:
                    return problem
                stack.append((inner, (*where, key[:40])))
        elif isinstance(item, list):
            stack.extend((inner, (*where, index)) for index, inner in enumerate(item))
    return None


def _no_constant(name: str) -> object:
    raise _Refusal(f"{name} is not a JSON number")


def _bounded_int(digits: str) -> int:
    if len(digits.lstrip("-")) > 19:  # refused from its digits: converting a long one is itself slow
        raise _Refusal(f"an integer of {len(digits.lstrip('-'))} digits is outside 64 bits")
    number = int(digits)
    if not -INT64 <= number < INT64:
        raise _Refusal(f"the integer {digits} is outside 64 bits")
    return number


def _finite_float(digits: str) -> float:
    number = float(digits)
    if not math.isfinite(number):
        raise _Refusal(f"{digits[:40]} overflows to {number}")
    return number


def _replace_surrogates(value: object) -> object:
    """`value` with each lone surrogate in its strings (keys too) read as U+FFFD."""

    def clean(text: str) -> str:
        return _SURROGATE.sub("\ufffd", text)

    def copy(item: object) -> object:
        if isinstance(item, str):
            return clean(item)
        if isinstance(item, list):
            return [copy(inner) for inner in item]
        if isinstance(item, dict):
            return {clean(key): copy(inner) for key, inner in item.items()}
        return item

    return copy(value)  # recursion is bounded: the value passed the depth cap before it was parsed


def line_problem(data: bytes, bounds: Bounds = DEFAULT_BOUNDS) -> str | None:
    """Why one line (or document) of JSON is refused before any parser sees it: its size, then its shape."""
    if len(data) > bounds.line_bytes:
        return f"{len(data)} bytes, over the cap of {bounds.line_bytes}"
    return shape_problem(data, max_values=bounds.values, max_depth=bounds.depth)


def parse_json(raw: bytes | str, bounds: Bounds = DEFAULT_BOUNDS) -> object | Refused:
    """One JSON document written by agent code: the value, or `Refused` with the reason. Never raises.

    Bytes are decoded as UTF-8 with invalid bytes read as U+FFFD (a str's lone surrogates too)."""
    data = raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else raw
    problem = line_problem(data, bounds)
    if problem is not None:
        return Refused(problem)
    text = data.decode("utf-8", "replace")  # a lone surrogate in a str is replaced here too
    try:
        value = json.loads(
            text, parse_constant=_no_constant, parse_int=_bounded_int, parse_float=_finite_float
        )
    except _Refusal as exc:
        return Refused(str(exc))
    except (ValueError, RecursionError) as exc:  # JSONDecodeError is a ValueError
        return Refused(f"not JSON: {str(exc)[:120]}")
    if ("\\ud" in text or "\\uD" in text) and _SURROGATE_ESCAPE.search(text):  # `in` first: it is fast
        value = _replace_surrogates(value)
    return value


class Record:
    """A JSON object written by agent code, read field by field: a field of the wrong type reads as
    missing."""

    __slots__ = ("_fields",)

    def __init__(self, fields: Mapping[str, object] | None = None) -> None:
        self._fields: Mapping[str, object] = MappingProxyType(dict(fields or {}))

    @classmethod
    def of(cls, value: object) -> Record | None:
        """The record of a parsed object; None for any other value."""
        return cls(value) if isinstance(value, dict) else None

    @property
    def fields(self) -> Mapping[str, object]:
        """Every field as parsed (read-only), for code that checks types itself."""
        return self._fields

    def __contains__(self, name: object) -> bool:
        return name in self._fields

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Record) and dict(self._fields) == dict(other._fields)

    def __repr__(self) -> str:
        return f"Record({dict(self._fields)!r})"

    def value(self, name: str) -> object:
        """The field as parsed (None if missing): for code that accepts more than one type."""
        return self._fields.get(name)

    def text(self, name: str, default: str = "") -> str:
        """The field if it is a string, else `default`."""
        found = self._fields.get(name)
        return found if isinstance(found, str) else default

    def optional_text(self, name: str) -> str | None:
        """The field if it is a string, else None."""
        found = self._fields.get(name)
        return found if isinstance(found, str) else None

    def integer(self, name: str) -> int | None:
        """The field if it is an integer (not a bool), else None."""
        found = self._fields.get(name)
        return found if isinstance(found, int) and not isinstance(found, bool) else None

    def number(self, name: str) -> float | None:
        """The field if it is a number (not a bool), else None."""
        found = self._fields.get(name)
        return float(found) if isinstance(found, int | float) and not isinstance(found, bool) else None

    def flag(self, name: str) -> bool | None:
        """The field if it is a bool, else None."""
        found = self._fields.get(name)
        return found if isinstance(found, bool) else None

    def record(self, name: str) -> Record:
        """The field if it is an object, else an empty record."""
        return Record.of(self._fields.get(name)) or Record()

    def items(self, name: str) -> tuple[object, ...]:
        """The field's items if it is an array, else none."""
        found = self._fields.get(name)
        return tuple(found) if isinstance(found, list) else ()

    def records(self, name: str) -> tuple[Record, ...]:
        """The objects among the field's items if it is an array (other items are left out)."""
        return tuple(record for item in self.items(name) if (record := Record.of(item)) is not None)


@dataclass(frozen=True)
class Skipped:
    """A line that was not read, and why."""

    line: int
    """1-based within what was read; 0 for the part of a file before what was read."""
    reason: str


@dataclass(frozen=True)
class Lines:
    """The JSON objects of agent-written JSONL and the lines skipped (one reason each)."""

    records: tuple[Record, ...] = ()
    skipped: tuple[Skipped, ...] = ()

    def __iter__(self) -> Iterator[Record]:
        return iter(self.records)

    def __len__(self) -> int:
        return len(self.records)

    def note(self, limit: int = 3) -> str:
        """`2 lines skipped (line 4: nests more than 64 levels deep; ...)`, or "" when none was."""
        if not self.skipped:
            return ""
        shown = "; ".join(f"line {s.line}: {s.reason}" for s in self.skipped[:limit])
        more = "; ..." if len(self.skipped) > limit else ""
        return f"{len(self.skipped)} line{'s' * (len(self.skipped) != 1)} skipped ({shown}{more})"


def jsonl(data: bytes | str, bounds: Bounds = DEFAULT_BOUNDS, *, first_line: int = 1) -> Lines:
    """The objects of JSONL text written by agent code; blank lines are passed over, any other line that
    is not a bounded JSON object is skipped with its reason. Never raises."""
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    records: list[Record] = []
    skipped: list[Skipped] = []
    for number, line in enumerate(raw.split(b"\n"), first_line):
        if not line.strip():
            continue
        value = parse_json(line, bounds)
        if isinstance(value, Refused):
            skipped.append(Skipped(number, value.reason))
        elif (record := Record.of(value)) is None:
            skipped.append(Skipped(number, f"a JSON {type(value).__name__}, not an object"))
        else:
            records.append(record)
    return Lines(tuple(records), tuple(skipped))


def _read(path: Path, limit: int, tail: bool) -> tuple[bytes, int]:
    """At most `limit` bytes of a regular file (its end with `tail`) and the file's size; OSError otherwise.

    Opened without blocking (a FIFO would wait for a writer) and checked to be a regular file once open."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(f"{path.name} is not a regular file")
        if tail and info.st_size > limit:
            handle.seek(info.st_size - limit)
        return handle.read(limit), info.st_size


def read_bytes(path: Path | None, limit: int = DEFAULT_BOUNDS.file_bytes, *, tail: bool = False) -> bytes:
    """At most `limit` bytes of an agent-written file (its start, or its end with `tail`); b"" where there is
    no such regular file or it cannot be read. Never raises."""
    if path is None:
        return b""
    try:
        data, _ = _read(path, limit, tail)
    except (OSError, ValueError):  # missing, a directory, a link loop, a name with a NUL: nothing to read
        return b""
    return data


def read_text(path: Path | None, limit: int = DEFAULT_BOUNDS.file_bytes, *, tail: bool = False) -> str:
    """`read_bytes` decoded as UTF-8, invalid bytes read as U+FFFD; "" where there is nothing to read."""
    return read_bytes(path, limit, tail=tail).decode("utf-8", "replace")


def read_jsonl(path: Path | None, bounds: Bounds = DEFAULT_BOUNDS) -> Lines:
    """The objects of an agent-written JSONL file (its last `bounds.file_bytes`, whole lines); none where
    there is nothing to read. Never raises."""
    if path is None:
        return Lines()
    try:
        data, size = _read(path, bounds.file_bytes, tail=True)
    except (OSError, ValueError) as exc:
        missing = isinstance(exc, FileNotFoundError)
        return Lines() if missing else Lines((), (Skipped(0, f"the file cannot be read: {exc}"),))
    if size <= bounds.file_bytes:
        return jsonl(data, bounds)
    _, _, rest = data.partition(b"\n")  # the first line read is cut: the end of a line not read
    lines = jsonl(rest, bounds, first_line=2)
    unread = size - len(rest)
    cut = Skipped(0, f"the first {unread} bytes, over the cap of {bounds.file_bytes}, were not read")
    return Lines(lines.records, (cut, *lines.skipped))


def json_object(raw: bytes | str, bounds: Bounds = DEFAULT_BOUNDS) -> Record | Refused:
    """One JSON object written by agent code (or a model): its record, or why there is none."""
    value = parse_json(raw, bounds)
    if isinstance(value, Refused):
        return value
    return Record.of(value) or Refused(f"a JSON {type(value).__name__}, not an object")
