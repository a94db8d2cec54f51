import pytest

from structs.lru import LRUCache


def test_on_evict_and_resize():
    evicted = []
    cache = LRUCache(3, on_evict=lambda k, v: evicted.append((k, v)))
    for i, key in enumerate("abcd"):
        cache.put(key, i)
    assert evicted == [("a", 0)]
    cache.put("b", 10)
    assert evicted == [("a", 0)]
    cache.resize(1)
    assert evicted == [("a", 0), ("c", 2), ("d", 3)]
    assert cache.keys() == ["b"] and cache.capacity == 1
    with pytest.raises(ValueError):
        cache.resize(0)


def test_without_callback():
    cache = LRUCache(1)
    cache.put(1, 1)
    cache.put(2, 2)
    cache.resize(2)
    cache.put(3, 3)
    assert cache.keys() == [2, 3]
