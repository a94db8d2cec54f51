from structs.trie import Trie


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
