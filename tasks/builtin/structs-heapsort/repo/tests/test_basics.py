from structs import MinHeap, Trie


def test_heap_push_peek():
    heap = MinHeap([3, 1, 2])
    assert heap.peek() == 1 and len(heap) == 3


def test_trie_contains():
    trie = Trie()
    trie.insert("car")
    assert "car" in trie and "ca" not in trie and trie.starts_with("ca")
