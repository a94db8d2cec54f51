"""A least-recently-used cache."""

from collections import OrderedDict
from typing import Any, Callable, Hashable


class LRUCache:
    """Maps keys to values, holding at most `capacity` entries; the least recently used goes first.

    Both `get` and `put` count as a use.
    """

    def __init__(self, capacity: int) -> None:
        if capacity < 1:
            raise ValueError("capacity must be at least 1")
        self.capacity = capacity
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

    def _shrink(self) -> None:
        while len(self._data) > self.capacity:
            self._data.popitem(last=False)

    def __len__(self) -> int:
        return len(self._data)

    def __contains__(self, key: Hashable) -> bool:
        return key in self._data

    def keys(self) -> list[Hashable]:
        """Keys from least to most recently used."""
        return list(self._data)
