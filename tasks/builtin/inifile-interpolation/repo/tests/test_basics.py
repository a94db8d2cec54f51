from inifile import Config, parse


def test_parse_sections():
    assert parse("[a]\nx = 1\n# note\n[b]\ny: two\n") == {"a": {"x": "1"}, "b": {"y": "two"}}


def test_config_int():
    assert Config.from_text("[s]\nn = 1_000\n").getint("s", "n") == 1000
