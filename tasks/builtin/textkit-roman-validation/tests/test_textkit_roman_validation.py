import pytest

from textkit.roman import from_roman


@pytest.mark.parametrize("text, n", [("I", 1), ("xiv", 14), ("MCMXCIV", 1994), ("MMMCMXCIX", 3999)])
def test_valid(text, n):
    assert from_roman(text) == n


@pytest.mark.parametrize("text", ["IIII", "VX", "IC", "MMMM", "", "ABC", "XXL"])
def test_invalid(text):
    with pytest.raises(ValueError):
        from_roman(text)
