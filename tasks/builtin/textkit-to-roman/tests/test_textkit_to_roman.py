import pytest

from textkit.roman import to_roman


@pytest.mark.parametrize("n, text", [(1, "I"), (4, "IV"), (9, "IX"), (14, "XIV"), (40, "XL"), (90, "XC"),
                                     (400, "CD"), (1994, "MCMXCIV"), (2024, "MMXXIV"), (3999, "MMMCMXCIX")])
def test_values(n, text):
    assert to_roman(n) == text


@pytest.mark.parametrize("n", [0, -3, 4000])
def test_range(n):
    with pytest.raises(ValueError):
        to_roman(n)
