import pytest

from inifile.values import as_bool


@pytest.mark.parametrize("text", ["yes", "TRUE", " on ", "1", "True"])
def test_true(text):
    assert as_bool(text) is True


@pytest.mark.parametrize("text", ["no", "False", "OFF", "0 "])
def test_false(text):
    assert as_bool(text) is False


@pytest.mark.parametrize("text", ["", "maybe", "2", "y"])
def test_invalid(text):
    with pytest.raises(ValueError):
        as_bool(text)
