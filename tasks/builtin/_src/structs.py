PROJECT = "structs"

BASE = {
    "README.md": """# structs

Plain-Python data structures: an LRU cache, a binary min-heap, a trie, and interval helpers.
Run the tests with `python3 -m pytest -q`.
""",
    "structs/__init__.py": '''"""structs: small data structures."""

from structs.heap import MinHeap, heapsort
from structs.interval import merge_intervals, total_covered
from structs.lru import LRUCache
from structs.trie import Trie

__all__ = ["MinHeap", "heapsort", "merge_intervals", "total_covered", "LRUCache", "Trie"]
''',
    "structs/lru.py": '''"""A least-recently-used cache."""

from collections import OrderedDict
from typing import Any, Callable, Hashable


class LRUCache:
    """Maps keys to values, holding at most `capacity` entries; the least recently used goes first.

    Both `get` and `put` count as a use. `on_evict(key, value)` is called for every entry evicted
    because the cache is full (or shrunk by `resize`).
    """

    def __init__(self, capacity: int, on_evict: Callable[[Hashable, Any], None] | None = None) -> None:
        if capacity < 1:
            raise ValueError("capacity must be at least 1")
        self.capacity = capacity
        self.on_evict = on_evict
        self._data: OrderedDict[Hashable, Any] = OrderedDict()

    def get(self, key: Hashable, default: Any = None) -> Any:
        if key not in self._data:
            return default
        self._data.move_to_end(key)
        return self._data[key]

    def put(self, key: Hashable, value: Any) -> None:
        self._data[key] = value
        self._data.move_to_end(key)
        self._shrink()

    def resize(self, capacity: int) -> None:
        """Change the capacity, evicting least recently used entries if needed."""
        if capacity < 1:
            raise ValueError("capacity must be at least 1")
        self.capacity = capacity
        self._shrink()

    def _shrink(self) -> None:
        while len(self._data) > self.capacity:
            key, value = self._data.popitem(last=False)
            if self.on_evict is not None:
                self.on_evict(key, value)

    def __len__(self) -> int:
        return len(self._data)

    def __contains__(self, key: Hashable) -> bool:
        return key in self._data

    def keys(self) -> list[Hashable]:
        """Keys from least to most recently used."""
        return list(self._data)
''',
    "structs/heap.py": '''"""A binary min-heap."""

from typing import Any, Iterable


class MinHeap:
    def __init__(self, items: Iterable[Any] = ()) -> None:
        self._items: list[Any] = []
        for item in items:
            self.push(item)

    def push(self, item: Any) -> None:
        items = self._items
        items.append(item)
        i = len(items) - 1
        while i > 0:
            parent = (i - 1) // 2
            if items[i] < items[parent]:
                items[i], items[parent] = items[parent], items[i]
                i = parent
            else:
                break

    def pop(self) -> Any:
        """Remove and return the smallest item; IndexError when empty."""
        items = self._items
        if not items:
            raise IndexError("pop from an empty heap")
        last = items.pop()
        if not items:
            return last
        smallest, items[0] = items[0], last
        i = 0
        while True:
            left, right = 2 * i + 1, 2 * i + 2
            child = left
            if right < len(items) and items[right] < items[left]:
                child = right
            if child >= len(items) or not items[child] < items[i]:
                break
            items[i], items[child] = items[child], items[i]
            i = child
        return smallest

    def peek(self) -> Any:
        if not self._items:
            raise IndexError("peek at an empty heap")
        return self._items[0]

    def __len__(self) -> int:
        return len(self._items)


def heapsort(items: Iterable[Any]) -> list[Any]:
    """A new list with the items in ascending order, using MinHeap."""
    heap = MinHeap(items)
    return [heap.pop() for _ in range(len(heap))]
''',
    "structs/trie.py": '''"""A prefix tree of words."""


class Trie:
    def __init__(self) -> None:
        self._root: dict = {}
        self._size = 0

    def insert(self, word: str) -> None:
        node = self._root
        for ch in word:
            node = node.setdefault(ch, {})
        if "$" not in node:
            node["$"] = True
            self._size += 1

    def __contains__(self, word: str) -> bool:
        node = self._find(word)
        return node is not None and "$" in node

    def __len__(self) -> int:
        return self._size

    def starts_with(self, prefix: str) -> bool:
        return self._find(prefix) is not None

    def words_with_prefix(self, prefix: str) -> list[str]:
        """All stored words that start with `prefix`, sorted."""
        node = self._find(prefix)
        found: list[str] = []
        if node is not None:
            self._collect(node, prefix, found)
        return sorted(found)

    def remove(self, word: str) -> bool:
        """Remove `word`; True if it was there. Branches left without words are pruned."""
        path = [self._root]
        for ch in word:
            if ch not in path[-1]:
                return False
            path.append(path[-1][ch])
        if "$" not in path[-1]:
            return False
        del path[-1]["$"]
        self._size -= 1
        for i in range(len(word), 0, -1):
            if path[i]:
                break
            del path[i - 1][word[i - 1]]
        return True

    def _find(self, prefix: str) -> dict | None:
        node = self._root
        for ch in prefix:
            if ch not in node:
                return None
            node = node[ch]
        return node

    def _collect(self, node: dict, prefix: str, found: list[str]) -> None:
        for key, child in node.items():
            if key == "$":
                found.append(prefix)
            else:
                self._collect(child, prefix + key, found)
''',
    "structs/interval.py": '''"""Helpers for closed integer-free intervals given as (start, end) pairs with start <= end."""


def merge_intervals(intervals: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """Merge overlapping or touching intervals; the result is sorted by start.

    >>> merge_intervals([(5, 7), (1, 3), (2, 4), (7, 8)])
    [(1, 4), (5, 8)]
    """
    merged: list[tuple[float, float]] = []
    for start, end in sorted(intervals):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def total_covered(intervals: list[tuple[float, float]]) -> float:
    """The total length covered by the intervals, counting overlaps once."""
    return sum(end - start for start, end in merge_intervals(intervals))
''',
    "tests/test_basics.py": """from structs import MinHeap, Trie


def test_heap_push_peek():
    heap = MinHeap([3, 1, 2])
    assert heap.peek() == 1 and len(heap) == 3


def test_trie_contains():
    trie = Trie()
    trie.insert("car")
    assert "car" in trie and "ca" not in trie and trie.starts_with("ca")
""",
}

TASKS = [
    {
        "id": "structs-merge-intervals",
        "difficulty": "easy",
        "split": "dev",
        "stubs": [("structs/interval.py", "merge_intervals")],
        "statement": "Implement `merge_intervals(intervals)` in `structs/interval.py`: merge overlapping or "
        "touching (start, end) intervals and return them sorted by start, e.g. "
        "[(5, 7), (1, 3), (2, 4), (7, 8)] -> [(1, 4), (5, 8)].",
        "test": """from structs.interval import merge_intervals, total_covered


def test_merge():
    assert merge_intervals([(5, 7), (1, 3), (2, 4), (7, 8)]) == [(1, 4), (5, 8)]
    assert merge_intervals([]) == []
    assert merge_intervals([(1, 10), (2, 3)]) == [(1, 10)]
    assert merge_intervals([(3, 4), (1, 2)]) == [(1, 2), (3, 4)]


def test_total():
    assert total_covered([(0, 2), (1, 3), (10, 11)]) == 4
""",
    },
    {
        "id": "structs-heapsort",
        "difficulty": "easy",
        "split": "heldout",
        "stubs": [("structs/heap.py", "heapsort")],
        "statement": "Implement `heapsort(items)` in `structs/heap.py`: return a new list of the items in "
        "ascending order, using the `MinHeap` class of the same module.",
        "test": """from structs.heap import heapsort


def test_sorts():
    assert heapsort([5, 2, 9, 1, 5, 6]) == [1, 2, 5, 5, 6, 9]
    assert heapsort([]) == []
    assert heapsort(iter([3, 1, 2])) == [1, 2, 3]
    assert heapsort(["b", "c", "a"]) == ["a", "b", "c"]
""",
    },
    {
        "id": "structs-lru-recency",
        "difficulty": "medium",
        "split": "dev",
        "edits": [
            (
                "structs/lru.py",
                """            return default
        self._data.move_to_end(key)
        return self._data[key]""",
                """            return default
        return self._data[key]""",
            )
        ],
        "statement": "Bug report: the LRUCache evicts entries that were just read. With capacity 2: "
        "put('a'), put('b'), get('a'), put('c') evicts 'a', but 'b' is the least recently "
        "used entry and should go. Reading an entry with `get` must count as a use.",
        "test": """from structs.lru import LRUCache


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
""",
    },
    {
        "id": "structs-heap-pop",
        "difficulty": "medium",
        "split": "dev",
        "edits": [
            (
                "structs/heap.py",
                """            if right < len(items) and items[right] < items[left]:
                child = right
""",
                "",
            )
        ],
        "statement": "MinHeap.pop in `structs/heap.py` sometimes returns items out of order: pushing "
        "[5, 3, 8, 1, 9, 2] and popping everything does not always give ascending order. "
        "Find and fix the bug.",
        "test": """import random

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
""",
    },
    {
        "id": "structs-lru-evict-resize",
        "difficulty": "hard",
        "split": "heldout",
        "edits": [
            (
                "structs/lru.py",
                '''    """Maps keys to values, holding at most `capacity` entries; the least recently used goes first.

    Both `get` and `put` count as a use. `on_evict(key, value)` is called for every entry evicted
    because the cache is full (or shrunk by `resize`).
    """

    def __init__(self, capacity: int, on_evict: Callable[[Hashable, Any], None] | None = None) -> None:
        if capacity < 1:
            raise ValueError("capacity must be at least 1")
        self.capacity = capacity
        self.on_evict = on_evict
''',
                '''    """Maps keys to values, holding at most `capacity` entries; the least recently used goes first.

    Both `get` and `put` count as a use.
    """

    def __init__(self, capacity: int) -> None:
        if capacity < 1:
            raise ValueError("capacity must be at least 1")
        self.capacity = capacity
''',
            ),
            (
                "structs/lru.py",
                '''    def resize(self, capacity: int) -> None:
        """Change the capacity, evicting least recently used entries if needed."""
        if capacity < 1:
            raise ValueError("capacity must be at least 1")
        self.capacity = capacity
        self._shrink()

    def _shrink(self) -> None:
        while len(self._data) > self.capacity:
            key, value = self._data.popitem(last=False)
            if self.on_evict is not None:
                self.on_evict(key, value)
''',
                """    def _shrink(self) -> None:
        while len(self._data) > self.capacity:
            self._data.popitem(last=False)
""",
            ),
        ],
        "statement": "Extend `LRUCache` (structs/lru.py) with two features:\n\n"
        "1. An optional constructor argument `on_evict`, a callable `on_evict(key, value)` "
        "called for every entry the cache evicts (not for entries replaced by `put` of the "
        "same key).\n2. A method `resize(capacity)` that changes the capacity; shrinking "
        "evicts least recently used entries (calling `on_evict`), and a capacity below 1 "
        "raises ValueError.",
        "test": """import pytest

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
""",
    },
    {
        "id": "structs-trie-remove",
        "difficulty": "hard",
        "split": "dev",
        "edits": [
            (
                "structs/trie.py",
                '''    def remove(self, word: str) -> bool:
        """Remove `word`; True if it was there. Branches left without words are pruned."""
        path = [self._root]
        for ch in word:
            if ch not in path[-1]:
                return False
            path.append(path[-1][ch])
        if "$" not in path[-1]:
            return False
        del path[-1]["$"]
        self._size -= 1
        for i in range(len(word), 0, -1):
            if path[i]:
                break
            del path[i - 1][word[i - 1]]
        return True

''',
                "",
            ),
            (
                "structs/trie.py",
                """    def __init__(self) -> None:
        self._root: dict = {}
        self._size = 0
""",
                """    def __init__(self) -> None:
        self._root: dict = {}
""",
            ),
            (
                "structs/trie.py",
                """        if "$" not in node:
            node["$"] = True
            self._size += 1
""",
                """        node["$"] = True
""",
            ),
            (
                "structs/trie.py",
                """    def __len__(self) -> int:
        return self._size

""",
                "",
            ),
        ],
        "statement": "Add to `Trie` (structs/trie.py): `len(trie)`, the number of distinct words stored "
        "(inserting a word twice counts once), and `remove(word) -> bool`, which removes a "
        "word and returns whether it was present. After removals, `starts_with(prefix)` "
        "must be False for prefixes no remaining word has (prune empty branches), and other "
        "words sharing a prefix must stay.",
        "test": """from structs.trie import Trie


def test_len_and_remove():
    trie = Trie()
    for word in ["car", "cart", "care", "dog", "car"]:
        trie.insert(word)
    assert len(trie) == 4
    assert trie.remove("cart") is True and trie.remove("cart") is False and trie.remove("ca") is False
    assert len(trie) == 3 and "car" in trie and "care" in trie
    assert trie.words_with_prefix("car") == ["car", "care"]
    assert trie.remove("dog") and not trie.starts_with("d")
    assert trie.remove("care") and trie.starts_with("car") and not trie.starts_with("care")
    assert trie.remove("car") and not trie.starts_with("c") and len(trie) == 0
""",
    },
]
