from evolve.llm.prefix_cache import PrefixCache, SavedContext, common_prefix


def _saved(tokens, size=100) -> SavedContext:
    return SavedContext(tuple(tokens), b"x" * size)


def test_common_prefix_counts_leading_tokens():
    assert common_prefix([1, 2, 3], [1, 2, 4, 5]) == 2
    assert common_prefix([], [1]) == 0
    assert common_prefix([1, 2], [1, 2]) == 2


def test_the_saved_context_sharing_the_most_tokens_is_found():
    cache = PrefixCache(10_000)
    cache.save(_saved([1, 2, 3, 4]))
    cache.save(_saved([1, 9, 9]))
    found = cache.best([1, 2, 3, 7])
    assert found is not None and found.saved.tokens == (1, 2, 3, 4) and found.shared == 3
    assert cache.best([5, 6]) is None


def test_a_context_is_dropped_when_a_longer_one_extends_it():
    cache = PrefixCache(10_000)
    cache.save(_saved([1, 2]))
    cache.save(_saved([1, 2, 3, 4]))
    assert len(cache) == 1


def test_the_least_recently_used_context_goes_first_when_over_capacity():
    cache = PrefixCache(3 * (100 + 8 * 2))
    for first in (1, 2, 3):
        cache.save(_saved([first, 0]))
    assert cache.best([1, 0]) is not None  # 1 is now the most recently used
    cache.save(_saved([4, 0]))
    assert len(cache) == 3 and cache.size <= cache.capacity_bytes
    assert cache.best([2, 0]) is None
    assert cache.best([1, 0]) is not None


def test_a_context_larger_than_the_whole_cache_is_not_kept():
    cache = PrefixCache(50)
    cache.save(_saved([1], size=100))
    assert len(cache) == 0
