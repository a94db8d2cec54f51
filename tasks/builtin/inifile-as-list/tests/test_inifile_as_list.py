from inifile.values import as_list


def test_split():
    assert as_list("a, b,,c") == ["a", "b", "c"]
    assert as_list("x\ny, z") == ["x", "y", "z"]
    assert as_list("") == []
    assert as_list("p;q ; r", sep=";") == ["p", "q", "r"]
