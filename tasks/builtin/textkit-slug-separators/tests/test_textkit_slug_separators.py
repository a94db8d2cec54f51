from textkit.slug import slugify


def test_punctuation_collapses():
    assert slugify("Hello, World!") == "hello-world"
    assert slugify("  --Already -- slugged--  ") == "already-slugged"


def test_accents_and_custom_separator():
    assert slugify("Crème Brûlée à la carte", sep="_") == "creme_brulee_a_la_carte"


def test_max_length_does_not_end_in_separator():
    assert slugify("The quick brown fox", max_length=10) == "the-quick"
