PROJECT = "todo"

BASE = {
    "README.md": """# todo

A command-line to-do list stored in a JSON file.

    python3 -m todo --file todo.json add "Buy milk" --priority 2 --tag home
    python3 -m todo --file todo.json list [--pending] [--tag home]
    python3 -m todo --file todo.json done 1
    python3 -m todo --file todo.json rm 1

Run the tests with `python3 -m pytest -q`.
""",
    "todo/__init__.py": '''"""todo: a command-line to-do list."""
''',
    "todo/__main__.py": """import sys

from todo.cli import main

sys.exit(main())
""",
    "todo/models.py": '''"""The to-do item."""

from dataclasses import dataclass, field


@dataclass
class Item:
    id: int
    title: str
    done: bool = False
    priority: int = 3
    """1 (most urgent) .. 5."""
    tags: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {"id": self.id, "title": self.title, "done": self.done, "priority": self.priority,
                "tags": list(self.tags)}

    @classmethod
    def from_dict(cls, data: dict) -> "Item":
        return cls(id=data["id"], title=data["title"], done=data.get("done", False),
                   priority=data.get("priority", 3), tags=list(data.get("tags", [])))
''',
    "todo/store.py": '''"""Items kept in a JSON file."""

import json
from pathlib import Path

from todo.models import Item


class NotFound(KeyError):
    pass


class Store:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.items: list[Item] = []
        if path.exists():
            self.items = [Item.from_dict(d) for d in json.loads(path.read_text())]

    def save(self) -> None:
        self.path.write_text(json.dumps([item.to_dict() for item in self.items], indent=2))

    def add(self, title: str, priority: int = 3, tags: list[str] | None = None) -> Item:
        """A new item with an id one higher than any id ever in the list (ids are never reused)."""
        if not 1 <= priority <= 5:
            raise ValueError("priority must be between 1 and 5")
        next_id = max((item.id for item in self.items), default=0) + 1
        item = Item(next_id, title, priority=priority, tags=list(tags or []))
        self.items.append(item)
        return item

    def get(self, item_id: int) -> Item:
        for item in self.items:
            if item.id == item_id:
                return item
        raise NotFound(item_id)

    def complete(self, item_id: int) -> Item:
        item = self.get(item_id)
        item.done = True
        return item

    def remove(self, item_id: int) -> Item:
        item = self.get(item_id)
        self.items.remove(item)
        return item

    def listing(self, pending_only: bool = False, tag: str | None = None) -> list[Item]:
        """Items sorted by priority (1 first), then by id."""
        chosen = [i for i in self.items if not (pending_only and i.done) and (tag is None or tag in i.tags)]
        return sorted(chosen, key=lambda item: (item.priority, item.id))
''',
    "todo/format.py": '''"""How items look on the terminal."""

from todo.models import Item


def format_item(item: Item) -> str:
    """One line: '[x] 3 (p1) Buy milk #home #shop' -- '[x]' when done, '[ ]' when not, then the id,
    the priority as 'p<N>' in parentheses, the title, and each tag prefixed with '#'."""
    mark = "[x]" if item.done else "[ ]"
    tags = "".join(f" #{tag}" for tag in item.tags)
    return f"{mark} {item.id} (p{item.priority}) {item.title}{tags}"


def format_summary(items: list[Item]) -> str:
    """'N items, M done'."""
    done = sum(item.done for item in items)
    return f"{len(items)} items, {done} done"
''',
    "todo/cli.py": '''"""The command line."""

import argparse
import sys
from pathlib import Path

from todo.format import format_item, format_summary
from todo.store import NotFound, Store


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="todo")
    parser.add_argument("--file", type=Path, default=Path("todo.json"))
    sub = parser.add_subparsers(dest="command", required=True)
    add = sub.add_parser("add")
    add.add_argument("title")
    add.add_argument("--priority", type=int, default=3)
    add.add_argument("--tag", action="append", default=[])
    listing = sub.add_parser("list")
    listing.add_argument("--pending", action="store_true")
    listing.add_argument("--tag")
    for name in ("done", "rm"):
        sub.add_parser(name).add_argument("id", type=int)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    store = Store(args.file)
    try:
        if args.command == "add":
            item = store.add(args.title, args.priority, args.tag)
            print(f"added {item.id}")
        elif args.command == "list":
            items = store.listing(pending_only=args.pending, tag=args.tag)
            for item in items:
                print(format_item(item))
            print(format_summary(items))
        elif args.command == "done":
            print(format_item(store.complete(args.id)))
        elif args.command == "rm":
            print(f"removed {store.remove(args.id).id}")
    except NotFound as exc:
        print(f"error: no item {exc.args[0]}", file=sys.stderr)
        return 1
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    store.save()
    return 0
''',
    "tests/test_basics.py": """from todo.cli import main


def test_add_and_list(tmp_path, capsys):
    path = str(tmp_path / "t.json")
    assert main(["--file", path, "add", "Buy milk"]) == 0
    assert main(["--file", path, "list"]) == 0
    assert "Buy milk" in capsys.readouterr().out


def test_missing_item(tmp_path):
    assert main(["--file", str(tmp_path / "t.json"), "done", "7"]) == 1
""",
}

TASKS = [
    {
        "id": "todo-format-item",
        "difficulty": "easy",
        "split": "dev",
        "stubs": [("todo/format.py", "format_item")],
        "statement": "Implement `format_item(item)` in `todo/format.py` as its docstring says. For example "
        "an item with id 3, priority 1, title 'Buy milk', tags ['home', 'shop'], done, is "
        "shown as '[x] 3 (p1) Buy milk #home #shop'; a pending item without tags with id 4 "
        "and priority 2 as '[ ] 4 (p2) Call Bob'.",
        "test": """from todo.format import format_item
from todo.models import Item


def test_format():
    assert format_item(Item(3, "Buy milk", True, 1, ["home", "shop"])) == "[x] 3 (p1) Buy milk #home #shop"
    assert format_item(Item(4, "Call Bob", priority=2)) == "[ ] 4 (p2) Call Bob"
""",
    },
    {
        "id": "todo-summary",
        "difficulty": "easy",
        "split": "heldout",
        "stubs": [("todo/format.py", "format_summary")],
        "statement": "Implement `format_summary(items)` in `todo/format.py`: it returns 'N items, M done' "
        "where N is the number of items and M the number of those that are done, e.g. "
        "'3 items, 1 done'.",
        "test": """from todo.format import format_summary
from todo.models import Item


def test_summary():
    assert format_summary([Item(1, "a", True), Item(2, "b"), Item(3, "c")]) == "3 items, 1 done"
    assert format_summary([]) == "0 items, 0 done"
""",
    },
    {
        "id": "todo-id-reuse",
        "difficulty": "medium",
        "split": "dev",
        "edits": [
            (
                "todo/store.py",
                """        next_id = max((item.id for item in self.items), default=0) + 1""",
                """        next_id = len(self.items) + 1""",
            )
        ],
        "statement": "Bug: after removing an item, `todo add` can create an item with the same id as an "
        "existing one (add 1, add 2, rm 1, add -> a second item 2), and then `done 2` "
        "changes the wrong item. New ids must be higher than every id in the list.",
        "test": """from todo.store import Store


def test_ids_unique_after_remove(tmp_path):
    store = Store(tmp_path / "t.json")
    store.add("a")
    store.add("b")
    store.remove(1)
    third = store.add("c")
    assert third.id == 3
    assert sorted(i.id for i in store.items) == [2, 3]
""",
    },
    {
        "id": "todo-sort-priority",
        "difficulty": "medium",
        "split": "dev",
        "edits": [
            (
                "todo/store.py",
                """        return sorted(chosen, key=lambda item: (item.priority, item.id))""",
                """        return sorted(chosen, key=lambda item: (-item.priority, item.id))""",
            )
        ],
        "statement": "`todo list` shows the least urgent items first. Priority 1 is the most urgent: items "
        "must be listed by priority (1 first), and items with the same priority by id.",
        "test": """from todo.cli import main


def test_order(tmp_path, capsys):
    path = str(tmp_path / "t.json")
    for title, priority in [("low", "5"), ("urgent", "1"), ("mid", "3"), ("urgent2", "1")]:
        main(["--file", path, "add", title, "--priority", priority])
    capsys.readouterr()
    main(["--file", path, "list"])
    lines = capsys.readouterr().out.splitlines()
    assert [line.split(") ")[1] for line in lines[:-1]] == ["urgent", "urgent2", "mid", "low"]
""",
    },
    {
        "id": "todo-pending-filter",
        "difficulty": "medium",
        "split": "heldout",
        "edits": [
            (
                "todo/cli.py",
                """    listing.add_argument("--pending", action="store_true")
""",
                "",
            ),
            (
                "todo/cli.py",
                """            items = store.listing(pending_only=args.pending, tag=args.tag)""",
                """            items = store.listing(tag=args.tag)""",
            ),
        ],
        "statement": "Add a `--pending` flag to `todo list` that shows only items not done yet (the "
        "summary line then counts only the listed items). `Store.listing` already supports it.",
        "test": """from todo.cli import main


def test_pending(tmp_path, capsys):
    path = str(tmp_path / "t.json")
    main(["--file", path, "add", "one"])
    main(["--file", path, "add", "two"])
    main(["--file", path, "done", "1"])
    capsys.readouterr()
    assert main(["--file", path, "list", "--pending"]) == 0
    out = capsys.readouterr().out
    assert "(p3) two" in out and "(p3) one" not in out and "1 items, 0 done" in out
""",
    },
    {
        "id": "todo-tags",
        "difficulty": "hard",
        "split": "dev",
        "edits": [
            (
                "todo/models.py",
                '''    """1 (most urgent) .. 5."""
    tags: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {"id": self.id, "title": self.title, "done": self.done, "priority": self.priority,
                "tags": list(self.tags)}

    @classmethod
    def from_dict(cls, data: dict) -> "Item":
        return cls(id=data["id"], title=data["title"], done=data.get("done", False),
                   priority=data.get("priority", 3), tags=list(data.get("tags", [])))''',
                '''    """1 (most urgent) .. 5."""

    def to_dict(self) -> dict:
        return {"id": self.id, "title": self.title, "done": self.done, "priority": self.priority}

    @classmethod
    def from_dict(cls, data: dict) -> "Item":
        return cls(id=data["id"], title=data["title"], done=data.get("done", False),
                   priority=data.get("priority", 3))''',
            ),
            (
                "todo/models.py",
                "from dataclasses import dataclass, field",
                "from dataclasses import dataclass",
            ),
            (
                "todo/store.py",
                """    def add(self, title: str, priority: int = 3, tags: list[str] | None = None) -> Item:""",
                """    def add(self, title: str, priority: int = 3) -> Item:""",
            ),
            (
                "todo/store.py",
                """        item = Item(next_id, title, priority=priority, tags=list(tags or []))""",
                """        item = Item(next_id, title, priority=priority)""",
            ),
            (
                "todo/store.py",
                '''    def listing(self, pending_only: bool = False, tag: str | None = None) -> list[Item]:
        """Items sorted by priority (1 first), then by id."""
        chosen = [i for i in self.items if not (pending_only and i.done) and (tag is None or tag in i.tags)]''',
                '''    def listing(self, pending_only: bool = False) -> list[Item]:
        """Items sorted by priority (1 first), then by id."""
        chosen = [i for i in self.items if not (pending_only and i.done)]''',
            ),
            (
                "todo/format.py",
                '''    the priority as 'p<N>' in parentheses, the title, and each tag prefixed with '#'."""
    mark = "[x]" if item.done else "[ ]"
    tags = "".join(f" #{tag}" for tag in item.tags)
    return f"{mark} {item.id} (p{item.priority}) {item.title}{tags}"''',
                '''    the priority as 'p<N>' in parentheses, and the title."""
    mark = "[x]" if item.done else "[ ]"
    return f"{mark} {item.id} (p{item.priority}) {item.title}"''',
            ),
            (
                "todo/cli.py",
                """    add.add_argument("--tag", action="append", default=[])
""",
                "",
            ),
            (
                "todo/cli.py",
                """    listing.add_argument("--tag")
""",
                "",
            ),
            (
                "todo/cli.py",
                """            item = store.add(args.title, args.priority, args.tag)""",
                """            item = store.add(args.title, args.priority)""",
            ),
            (
                "todo/cli.py",
                """            items = store.listing(pending_only=args.pending, tag=args.tag)""",
                """            items = store.listing(pending_only=args.pending)""",
            ),
            ("README.md", """ --priority 2 --tag home""", """ --priority 2"""),
            ("README.md", """ [--pending] [--tag home]""", """ [--pending]"""),
        ],
        "statement": "Add tags to the to-do list.\\n\\n"
        "- `todo add TITLE --tag home --tag shop` (the option may repeat) stores the tags with "
        "the item (in the JSON file, key `tags`, a list; files without the key still load).\\n"
        "- `todo list --tag home` lists only items with that tag.\\n"
        "- Each listed item shows its tags after the title, each prefixed with '#': "
        "'[ ] 1 (p3) Buy milk #home #shop'.\\n"
        "- `Store.add(title, priority=3, tags=None)` and `Store.listing(pending_only=False, "
        "tag=None)` take the new arguments; `Item` has a `tags` list (default empty).",
        "test": """import json

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
""",
    },
]
