from todo.cli import main


def test_add_and_list(tmp_path, capsys):
    path = str(tmp_path / "t.json")
    assert main(["--file", path, "add", "Buy milk"]) == 0
    assert main(["--file", path, "list"]) == 0
    assert "Buy milk" in capsys.readouterr().out


def test_missing_item(tmp_path):
    assert main(["--file", str(tmp_path / "t.json"), "done", "7"]) == 1
