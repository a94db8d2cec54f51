from todo.cli import main


def test_pending(tmp_path, capsys):
    path = str(tmp_path / "t.json")
    main(["--file", path, "add", "one"])
    main(["--file", path, "add", "two"])
    main(["--file", path, "done", "1"])
    capsys.readouterr()
    assert main(["--file", path, "list", "--pending"]) == 0
    out = capsys.readouterr().out
    assert "(p3) two" in out and "(p3) one" not in out and "1 items, 0 done" in out
