import pytest

from textkit.case import camel_to_snake


@pytest.mark.parametrize("name, snake", [("simple", "simple"), ("camelCase", "camel_case"),
                                         ("CamelCase", "camel_case"), ("parseHTTPHeader", "parse_http_header"),
                                         ("HTMLParser", "html_parser"), ("version2Id", "version2_id"),
                                         ("getX", "get_x")])
def test_cases(name, snake):
    assert camel_to_snake(name) == snake
