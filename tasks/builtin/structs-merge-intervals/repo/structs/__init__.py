"""structs: small data structures."""

from structs.heap import MinHeap, heapsort
from structs.interval import merge_intervals, total_covered
from structs.lru import LRUCache
from structs.trie import Trie

__all__ = ["MinHeap", "heapsort", "merge_intervals", "total_covered", "LRUCache", "Trie"]
