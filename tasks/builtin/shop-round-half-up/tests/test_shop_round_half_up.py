from shop.money import percent_of
from shop.pricing import tax


def test_half_up():
    assert percent_of(25, 10) == 3
    assert percent_of(45, 10) == 5
    assert percent_of(24, 10) == 2
    assert percent_of(1000, 8.25) == 83
    assert tax(200) == 17
