from shop.money import format_cents


def test_format():
    assert format_cents(123405) == "$1,234.05"
    assert format_cents(7) == "$0.07"
    assert format_cents(0) == "$0.00"
    assert format_cents(-50) == "-$0.50"
    assert format_cents(100000000) == "$1,000,000.00"
