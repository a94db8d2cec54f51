import json

from todo.cli import main
from todo.models import Item
from todo.store import Store


def test_tags_cli(tmp_path, capsys):
    path = str(tmp_path / "t.json")
    main(["--file", path, "add", "Buy milk", "--tag", "home", "--tag", "shop"])
    main(["--file", path, "add", "Write report", "--tag", "work"])
    capsys.readouterr()
    main(["--file", path, "list", "--tag", "home"])
    out = capsys.readouterr().out
    assert "[ ] 1 (p3) Buy milk #home #shop" in out and "report" not in out
    assert json.loads((tmp_path / "t.json").read_text())[0]["tags"] == ["home", "shop"]


def test_store_api_and_old_files(tmp_path):
    (tmp_path / "old.json").write_text(json.dumps([{"id": 1, "title": "x", "done": False, "priority": 2}]))
    store = Store(tmp_path / "old.json")
    assert store.items[0].tags == []
    store.add("y", tags=["a"])
    assert [i.title for i in store.listing(tag="a")] == ["y"]
    assert Item(5, "z").tags == []
