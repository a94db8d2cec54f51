"""The one reader of agent-written data: every hostile line is a skipped line with its reason, next to the
honest lines it sits among; nothing raises, and nothing unbounded is parsed."""

from __future__ import annotations

import json
import os
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evolve.untrusted import (
    Bounds,
    Lines,
    Record,
    Refused,
    json_object,
    json_path,
    jsonl,
    parse_json,
    read_bytes,
    read_jsonl,
    read_text,
    shape_problem,
    value_problem,
)

HONEST = b'{"role": "assistant", "content": "done"}'

HOSTILE = {
    "a depth bomb": (b"[" * 1_000_000 + b"]" * 1_000_000, "nests more than 64 levels deep"),
    "an object bomb": (b'{"a":' * 100_000 + b"1" + b"}" * 100_000, "nests more than 64 levels deep"),
    "a 10**6-digit integer": (b'{"tokens": ' + b"9" * 1_000_000 + b"}", "an integer of 1000000 digits"),
    "a negative 21-digit integer": (b'{"n": -' + b"1" * 21 + b"}", "an integer of 21 digits"),
    "an integer just past 64 bits": (b'{"n": 9223372036854775808}', "integer 9223372036854775808 is outside"),
    "NaN": (b'{"content": NaN}', "NaN is not a JSON number"),
    "Infinity": (b'{"content": Infinity}', "Infinity is not a JSON number"),
    "-Infinity": (b'{"content": -Infinity}', "-Infinity is not a JSON number"),
    "a float overflowing to inf": (b'{"content": 1e999}', "1e999 overflows to inf"),
    "a million values": (b"[" + b"0," * 1_000_000 + b"0]", "holds more than 262144 JSON values"),
    "invalid JSON": (b'{"role": "assistant"', "not JSON"),
    "invalid UTF-8 outside strings": (b'{"role": \xff}', "not JSON"),
    "an array": (b'[{"role": "assistant"}]', "a JSON list, not an object"),
    "a string": (b'"assistant"', "a JSON str, not an object"),
}


@pytest.mark.parametrize("name", HOSTILE)
def test_a_hostile_line_is_skipped_with_its_reason_and_the_honest_lines_are_read(name):
    line, reason = HOSTILE[name]
    started = time.monotonic()
    lines = jsonl(b"\n".join([HONEST, line, HONEST]))
    assert time.monotonic() - started < 5.0
    assert [record.text("content") for record in lines] == ["done", "done"]
    ((number, why),) = [(s.line, s.reason) for s in lines.skipped]
    assert number == 2 and reason in why, why
    assert lines.note().startswith("1 line skipped (line 2: ")


def test_a_100_mb_line_is_refused_unparsed():
    huge = b'{"content": "' + b"x" * (100 << 20) + b'"}'
    lines = jsonl(huge + b"\n" + HONEST)
    assert [r.text("content") for r in lines] == ["done"]
    assert lines.skipped[0].reason == f"{len(huge)} bytes, over the cap of {8 << 20}"


def test_a_100_mb_file_is_read_from_its_end(tmp_path):
    path = tmp_path / "transcript.jsonl"
    with path.open("wb") as handle:  # one 100 MB line (sparse), then an honest one
        handle.write(b'{"content": "')
        handle.seek(100 << 20)
        handle.write(b'"}\n' + HONEST + b"\n")
    lines = read_jsonl(path)
    assert [r.text("content") for r in lines] == ["done"]
    assert lines.skipped[0].line == 0 and "were not read" in lines.skipped[0].reason
    assert len(read_bytes(path, 1000, tail=True)) == 1000 and read_text(path, 13) == '{"content": "'


def test_invalid_utf8_inside_a_string_reads_as_the_replacement_character():
    (record,) = jsonl(b'{"content": "caf\xe9 \xff"}')
    assert record.text("content") == "caf\ufffd \ufffd"


def test_a_lone_surrogate_reads_as_the_replacement_character_and_can_be_written_back(tmp_path):
    (record,) = jsonl(b'{"content": "a\\ud800b", "\\udfff": ["\\uDC00"], "pair": "\\ud83d\\ude00"}')
    assert record.text("content") == "a\ufffdb" and record.items("\ufffd") == ("\ufffd",)
    assert record.text("pair") == "\U0001f600"
    (tmp_path / "out.md").write_text(record.text("content"))  # a surrogate would raise here


def test_a_field_of_the_wrong_type_reads_as_missing():
    record = json_object(
        b'{"role": ["assistant"], "content": {"a": 1}, "n": true, "ok": 1, "parts": "x", '
        b'"message": [1], "list": [1, {"a": "b"}, "c"], "f": 1.5}'
    )
    assert isinstance(record, Record)
    assert record.text("role") == "" and record.optional_text("content") is None
    assert record.text("missing") == ""
    assert record.integer("n") is None and record.number("n") is None and record.flag("ok") is None
    assert record.integer("ok") == 1 and record.number("f") == 1.5 and record.flag("n") is True
    assert record.items("parts") == () and record.record("message") == Record()
    assert record.records("list") == (Record({"a": "b"}),) and record.record("list").text("a") == ""
    assert "role" in record and record.value("role") == ["assistant"]


def test_parse_json_never_raises_and_says_why():
    assert parse_json("[1, 2]") == [1, 2]
    assert parse_json('["a\ud800"]') == ["a\ufffd\ufffd\ufffd"]  # a str's own lone surrogate
    assert parse_json(b"") == Refused("not JSON: Expecting value: line 1 column 1 (char 0)")
    assert parse_json(b"{}" * 10, Bounds(line_bytes=10)) == Refused("20 bytes, over the cap of 10")
    assert json_object(b"[]") == Refused("a JSON list, not an object")


def test_files_that_are_not_regular_read_as_empty(tmp_path):
    fifo = tmp_path / "fifo.jsonl"
    os.mkfifo(fifo)  # opening a FIFO for reading would wait for a writer
    (tmp_path / "loop.jsonl").symlink_to(tmp_path / "loop.jsonl")
    (tmp_path / "dir.jsonl").mkdir()
    for name in ("fifo.jsonl", "loop.jsonl", "dir.jsonl"):
        assert read_text(tmp_path / name) == "" and read_bytes(tmp_path / name) == b""
        lines = read_jsonl(tmp_path / name)
        assert lines.records == () and "the file cannot be read" in lines.skipped[0].reason
    assert read_jsonl(tmp_path / "missing.jsonl") == Lines() and read_text(None) == ""


def test_the_shape_check_skips_strings_and_stops_at_its_caps():
    text = json.dumps({"content": "[{,:" * 100_000}).encode()
    assert shape_problem(text, max_values=10, max_depth=2) is None
    assert shape_problem(b'[[["\\"]]]"]]]', max_values=100, max_depth=2) == "nests more than 2 levels deep"
    assert shape_problem(b"[0,0,0]", max_values=3, max_depth=2) == "holds more than 3 JSON values"
    # an escaped backslash ends a string, an escaped quote does not
    assert shape_problem(b'["\\\\", [[1]]]', max_values=100, max_depth=2) == "nests more than 2 levels deep"
    assert shape_problem(b'["\\\\\\"[[[[", 1]', max_values=100, max_depth=2) is None


def test_value_problem_names_where():
    assert value_problem({"tools": [{"d": "\udc00"}]}) == (
        "tools[0].d: a lone surrogate (U+DC00) at character 0 is not valid Unicode"
    )
    assert value_problem({"t": float("nan")}) == "t: nan is not a finite number"
    assert value_problem([2**64]) == "[0]: the integer is outside 64 bits"
    assert value_problem({"ok": [1, "a", None, True, 1.5]}) is None


KEYS = st.text('[]{}"\\k', max_size=3)
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text('[]{},:"\\ab\n'),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(KEYS, inner, max_size=3),
    max_leaves=30,
)
"""JSON whose strings are full of brackets, quotes and backslashes: the shape check must skip them."""


def depth_and_marks(value: object) -> tuple[int, int]:
    """The nesting of `value` and the `[`, `{`, `,` and `:` outside its strings: each value but the first
    follows one, so 1 + marks bounds the values and keys `json.loads` builds."""
    if isinstance(value, list | dict):
        items = list(value.values()) if isinstance(value, dict) else value
        inner = [depth_and_marks(item) for item in items]
        marks = 1 + max(len(items) - 1, 0) + (len(items) if isinstance(value, dict) else 0)
        return 1 + max((d for d, _ in inner), default=0), marks + sum(m for _, m in inner)
    return 0, 0


@settings(max_examples=300, deadline=None)
@given(JSON, st.booleans())
def test_the_shape_check_counts_what_the_parser_builds(value, ascii_only):
    raw = json.dumps(value, ensure_ascii=ascii_only).encode()
    depth, marks = depth_and_marks(value)
    assert shape_problem(raw, max_values=marks + 1, max_depth=depth) is None
    if depth > 0:
        nests = shape_problem(raw, max_values=marks + 1, max_depth=depth - 1)
        assert nests == f"nests more than {depth - 1} levels deep"
        assert shape_problem(raw, max_values=marks, max_depth=depth) == f"holds more than {marks} JSON values"


def test_a_place_in_json_is_named_on_one_line_whatever_its_keys() -> None:
    assert json_path(("tools", 0, "function", "$ref")) == "tools[0].function.$ref"
    assert json_path(()) == "the body"
    # a key of the agent's with a newline, a dot or any length: quoted as JSON, escapes and all, and cut
    assert json_path(("messages", "\n")) == 'messages["\\n"]'
    assert json_path(("a.b", 1)) == '["a.b"][1]'
    long = json_path(("x" * 500 + " ",))
    assert "\n" not in long and len(long) < 60 and long.endswith('..."]')
    assert value_problem({"messages": {"\n": 2**63}}) == 'messages["\\n"]: the integer is outside 64 bits'
