import pytest

from inifile.parser import ParseError, parse


def test_line_number():
    with pytest.raises(ParseError) as info:
        parse("[a]\nx = 1\noops\n")
    assert info.value.line == 3 and "line 3" in str(info.value)


def test_first_line():
    with pytest.raises(ParseError) as info:
        parse("garbage")
    assert info.value.line == 1
