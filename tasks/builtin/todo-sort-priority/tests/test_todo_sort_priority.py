from todo.cli import main


def test_order(tmp_path, capsys):
    path = str(tmp_path / "t.json")
    for title, priority in [("low", "5"), ("urgent", "1"), ("mid", "3"), ("urgent2", "1")]:
        main(["--file", path, "add", title, "--priority", priority])
    capsys.readouterr()
    main(["--file", path, "list"])
    lines = capsys.readouterr().out.splitlines()
    assert [line.split(") ")[1] for line in lines[:-1]] == ["urgent", "urgent2", "mid", "low"]
