from textkit.wrap import wrap


def test_plain():
    assert wrap("the quick brown fox jumps", 10) == ["the quick", "brown fox", "jumps"]


def test_long_words_are_cut():
    assert wrap("a supercalifragilistic word", 8) == ["a", "supercal", "ifragili", "stic", "word"]
    assert all(len(line) <= 8 for line in wrap("x" * 30, 8))


def test_paragraphs():
    assert wrap("one two\n\nthree four", 7) == ["one two", "", "three", "four"]
