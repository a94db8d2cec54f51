import pytest

from inifile.config import Config, InterpolationError

TEXT = """
[DEFAULT]
root = /srv
[paths]
data = ${root}/data
cache = ${data}/cache
[app]
log = ${paths:data}/log
workers = ${n}
n = 4
loop_a = ${loop_b}
loop_b = ${loop_a}
missing = ${nowhere:x}
"""


def test_references():
    config = Config.from_text(TEXT)
    assert config.get("paths", "cache") == "/srv/data/cache"
    assert config.get("app", "log") == "/srv/data/log"
    assert config.getint("app", "workers") == 4


def test_errors():
    config = Config.from_text(TEXT)
    with pytest.raises(InterpolationError):
        config.get("app", "loop_a")
    with pytest.raises(InterpolationError):
        config.get("app", "missing")
