from inifile.parser import parse


def test_inline_comments():
    text = "[server]\nport = 8080 ; default port\nhost = example.org # public\ncolor = #fff\n"
    assert parse(text) == {"server": {"port": "8080", "host": "example.org", "color": "#fff"}}
