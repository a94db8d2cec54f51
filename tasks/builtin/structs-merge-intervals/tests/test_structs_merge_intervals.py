from structs.interval import merge_intervals, total_covered


def test_merge():
    assert merge_intervals([(5, 7), (1, 3), (2, 4), (7, 8)]) == [(1, 4), (5, 8)]
    assert merge_intervals([]) == []
    assert merge_intervals([(1, 10), (2, 3)]) == [(1, 10)]
    assert merge_intervals([(3, 4), (1, 2)]) == [(1, 2), (3, 4)]


def test_total():
    assert total_covered([(0, 2), (1, 3), (10, 11)]) == 4
