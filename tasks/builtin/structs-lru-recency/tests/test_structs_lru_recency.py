from structs.lru import LRUCache


def test_get_refreshes():
    cache = LRUCache(2)
    cache.put("a", 1)
    cache.put("b", 2)
    assert cache.get("a") == 1
    cache.put("c", 3)
    assert "a" in cache and "b" not in cache and "c" in cache
    assert cache.keys() == ["a", "c"]


def test_missing_key_default():
    assert LRUCache(1).get("zz", 5) == 5
