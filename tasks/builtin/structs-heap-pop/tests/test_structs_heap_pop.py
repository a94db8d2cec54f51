import random

from structs.heap import MinHeap


def test_pops_in_order():
    heap = MinHeap([5, 3, 8, 1, 9, 2])
    assert [heap.pop() for _ in range(6)] == [1, 2, 3, 5, 8, 9]


def test_random():
    rng = random.Random(7)
    for _ in range(50):
        values = [rng.randint(0, 100) for _ in range(rng.randint(1, 40))]
        heap = MinHeap(values)
        assert [heap.pop() for _ in values] == sorted(values)
