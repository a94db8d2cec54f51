from structs.heap import heapsort


def test_sorts():
    assert heapsort([5, 2, 9, 1, 5, 6]) == [1, 2, 5, 5, 6, 9]
    assert heapsort([]) == []
    assert heapsort(iter([3, 1, 2])) == [1, 2, 3]
    assert heapsort(["b", "c", "a"]) == ["a", "b", "c"]
