"""A least-recently-used cache."""

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
