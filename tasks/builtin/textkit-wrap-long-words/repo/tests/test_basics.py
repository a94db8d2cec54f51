from textkit import slugify, snake_to_camel


def test_slug_simple():
    assert slugify("Hello World") == "hello-world"


def test_snake_to_camel():
    assert snake_to_camel("parse_http_header") == "parseHttpHeader"
    assert snake_to_camel("parse_http_header", upper_first=True) == "ParseHttpHeader"
