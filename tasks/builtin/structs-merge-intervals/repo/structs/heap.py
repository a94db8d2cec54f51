"""A binary min-heap."""

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
