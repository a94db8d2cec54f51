from todo.format import format_item
from todo.models import Item


def test_format():
    assert format_item(Item(3, "Buy milk", True, 1, ["home", "shop"])) == "[x] 3 (p1) Buy milk #home #shop"
    assert format_item(Item(4, "Call Bob", priority=2)) == "[ ] 4 (p2) Call Bob"
