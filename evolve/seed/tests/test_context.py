from agent.context import check_command, is_test, view_repo


def test_relevant_files_first_and_irrelevant_ones_left_out(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg/roman.py").write_text("def to_roman(n):\n    raise NotImplementedError\n")
    (tmp_path / "pkg/other.py").write_text("X = 1\n" * 50)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests/test_x.py").write_text("def test_x():\n    pass\n")
    view = view_repo(tmp_path, "Implement `to_roman(number)` in `pkg/roman.py`.")
    assert view.shown == ["pkg/roman.py"]
    assert set(view.files) == {"pkg/roman.py", "pkg/other.py", "tests/test_x.py"}
    assert "pytest" in view.check_command


def test_check_command_falls_back_to_doctest_then_compile():
    assert check_command(["s.py"], {"s.py": '"""\n>>> f()\n1\n"""'}) == "python3 -m doctest s.py"
    assert check_command(["s.py"], {"s.py": "x = 1"}) == "python3 -m compileall -q ."
    assert is_test("tests/a.py") and is_test("pkg/test_a.py") and not is_test("pkg/a.py")


def test_docstring_examples_join_the_pytest_checks():
    files = ["pkg/m.py", "tests/test_m.py"]
    texts = {"pkg/m.py": '"""\n>>> 1 + 1\n2\n"""', "tests/test_m.py": "def test_x():\n    pass\n"}
    assert check_command(files, texts).endswith("--doctest-modules")
    assert not check_command(files, {**texts, "pkg/m.py": "x = 1"}).endswith("--doctest-modules")
