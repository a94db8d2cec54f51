from textkit.stats import word_frequencies


def test_stopwords_are_removed_case_insensitively():
    text = "The cat and the hat. The end and the start"
    assert word_frequencies(text, stopwords={"The", "and"}) == [("cat", 1), ("end", 1), ("hat", 1), ("start", 1)]


def test_top_still_works():
    assert word_frequencies("b a b c c c", top=2) == [("c", 3), ("b", 2)]
    assert word_frequencies("b a b", stopwords=None) == [("b", 2), ("a", 1)]
