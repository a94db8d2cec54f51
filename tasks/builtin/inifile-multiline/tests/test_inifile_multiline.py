from inifile import dumps, parse
from inifile.config import Config


def test_continuation_lines():
    text = "[s]\npaths = /a\n    /b ; comment\n\t/c\nname = x\n"
    assert parse(text) == {"s": {"paths": "/a\n/b\n/c", "name": "x"}}


def test_round_trip():
    data = {"DEFAULT": {"a": "1"}, "s": {"paths": "/a\n/b", "name": "x"}}
    assert parse(dumps(data)) == data


def test_list_of_lines():
    assert Config.from_text("[s]\nitems =\n  one\n  two\n").getlist("s", "items") == ["one", "two"]
